//! Property tests of the slash-command parsers (`commands::parse` and the `/subagents`
//! arguments): no panic on any text, short answers, and the documented forms read back.

use proptest::prelude::*;

use super::subagents::{self, SubCommand};
use super::{parse, Command};

/// Longest usage answer any input may produce, in characters.
const MAX_USAGE_CHARS: usize = 400;

const WORDS: &[&str] = &[
    "/",
    "@",
    "#",
    "subagents",
    "subagent",
    "SEND",
    "send",
    "log",
    "tools",
    "list",
    "ls",
    "stop",
    "kill",
    "info",
    "all",
    "help",
    "status",
    "new",
    "reset",
    "0",
    "1",
    "200",
    "201",
    "+5",
    "-1",
    "99999999999999999999999",
    " ",
    "  ",
    "\t",
    "\n",
    "\u{3000}",
    "\u{a0}",
    "\u{85}",
    "é",
    "🙂",
];

fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => prop::sample::select(WORDS).prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
        1 => ".{0,5}",
    ];
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

fn short(cmd: &Command) -> Result<(), TestCaseError> {
    match cmd {
        Command::Usage(u) => {
            prop_assert!(
                u.chars().count() <= MAX_USAGE_CHARS,
                "usage of {} chars",
                u.chars().count()
            );
        }
        Command::Subagents(SubCommand::Stop(t) | SubCommand::Info(t)) => {
            prop_assert!(t.chars().count() <= 64);
        }
        Command::Subagents(SubCommand::Log { target, limit, .. }) => {
            prop_assert!(target.chars().count() <= 64 && (1..=200).contains(limit));
        }
        Command::Subagents(SubCommand::Send { target, message }) => {
            prop_assert!(target.chars().count() <= 64 && !message.is_empty());
            prop_assert_eq!(message.trim(), message.as_str());
        }
        _ => {}
    }
    Ok(())
}

/// Catches: an unknown action's name echoed back whole (a megabyte in, a megabyte
/// answered) and a target of any length; an unknown command is a message, not answered.
#[test]
fn long_names_and_targets_get_short_answers() {
    let long = "x".repeat(100_000);
    assert_eq!(parse(&format!("/{long}")), None);
    for text in [
        format!("/subagents {long}"),
        format!("/subagents info {long}"),
        format!("/subagents send {long} hi"),
    ] {
        match parse(&text) {
            Some(Command::Usage(u)) => {
                assert!(u.chars().count() <= MAX_USAGE_CHARS, "{}", &u[..80])
            }
            other => panic!("expected a usage line, got {other:?}"),
        }
    }
    assert_eq!(
        parse(&format!("/subagents send #1 {}", "é".repeat(32_001))),
        Some(Command::Usage(
            "The message is longer than 32000 characters.".into()
        ))
    );
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic on any text, an answer without bound, and text taken for a
    /// command (or a command missed) against the rule "/" + a name of the table.
    #[test]
    fn any_text_parses_without_panic_into_short_answers(t in text()) {
        let got = parse(&t);
        let trimmed = t.trim();
        let looks_like_command = trimmed
            .strip_prefix('/')
            .filter(|r| !r.starts_with(char::is_whitespace))
            .and_then(|r| r.split_whitespace().next())
            .is_some_and(|head| super::table::find(&head.to_ascii_lowercase()).is_some());
        prop_assert_eq!(got.is_some(), looks_like_command, "{:?}", t);
        if let Some(cmd) = &got {
            short(cmd)?;
        }
    }

    /// Catches: the `/subagents` parser trusting that its two inputs agree (it sliced one
    /// by the lengths of the other).
    #[test]
    fn subagents_parse_survives_any_inputs(words in prop::collection::vec(text(), 0..5), raw in text()) {
        let args: Vec<&str> = words.iter().map(String::as_str).collect();
        let r = subagents::parse(&args, &raw);
        if let Err(u) = &r {
            prop_assert!(u.chars().count() <= MAX_USAGE_CHARS);
        }
        if let Ok(sub) = r {
            short(&Command::Subagents(sub))?;
        }
    }

    /// Catches: case or extra spacing changing what a command means, and a `@botname`
    /// suffix (left only on another bot's commands: the Telegram adapter removes ours)
    /// taken for one of ours.
    #[test]
    fn case_bot_suffix_and_spacing_do_not_matter(
        name in prop::sample::select(&["help", "status", "new", "stop", "subagents"][..]),
        upper in any::<bool>(),
        bot in prop::option::of("[a-z_]{1,12}"),
        pad in prop::sample::select(&[" ", "  ", "\t", "\u{3000}"][..]),
        tail in prop::sample::select(&["", "list", "log #2 5 tools", "info 3"][..]),
    ) {
        let head = if upper { name.to_uppercase() } else { name.to_string() };
        let at = bot.map(|b| format!("@{b}")).unwrap_or_default();
        let plain = if at.is_empty() { parse(&format!("/{name} {tail}")) } else { None };
        prop_assert_eq!(parse(&format!("{pad}/{head}{at}{pad}{}{pad}", tail.replace(' ', pad))), plain);
    }

    /// Catches: a send message losing its inner spacing or text, or a log limit read wrong.
    #[test]
    fn send_and_log_read_back(
        target in "#?[0-9a-f]{1,12}",
        message in "[^\\s]{1,8}( {1,3}[^\\s]{1,8}){0,4}",
        limit in 0usize..400,
    ) {
        prop_assert_eq!(
            parse(&format!("/subagents send {target}   {message}  ")),
            Some(Command::Subagents(SubCommand::Send { target: target.clone(), message }))
        );
        let log = parse(&format!("/subagents log {target} {limit}"));
        if (1..=200).contains(&limit) {
            prop_assert_eq!(log, Some(Command::Subagents(SubCommand::Log { target, limit, tools: false })));
        } else {
            prop_assert!(matches!(log, Some(Command::Usage(_))));
        }
    }
}
