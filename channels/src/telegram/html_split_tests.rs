//! Tests of the HTML splitter: examples, and properties over generated Markdown with long
//! code blocks — every part balanced, within Telegram's limit, and the parts' texts put
//! end to end are the whole message's text.

use proptest::prelude::*;

use super::*;
use crate::telegram::format::to_html;

/// Telegram's limit on one message's visible text, in UTF-16 units.
const TELEGRAM_LIMIT: usize = 4096;

/// Whether `html` is balanced: every closing tag closes the innermost open one, and none
/// is left open. The reason when not.
fn balanced(html: &str) -> Result<(), String> {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        let end = rest[at..].find('>').ok_or("a tag without its `>`")? + at;
        let inside = &rest[at + 1..end];
        match inside.strip_prefix('/') {
            Some(name) => match open.pop() {
                Some(top) if top == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            },
            None => open.push(inside.split(' ').next().unwrap_or(inside)),
        }
        rest = &rest[end + 1..];
    }
    match open.is_empty() {
        true => Ok(()),
        false => Err(format!("left open: {open:?}")),
    }
}

/// Each visible character of `html` with the names of the tags around it.
fn styled(html: &str) -> Vec<(char, Vec<String>)> {
    let mut open: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for piece in pieces(html) {
        match piece {
            Piece::Open { name, .. } => open.push(name.to_string()),
            Piece::Close { .. } => {
                open.pop();
            }
            Piece::Char { ch, .. } => out.push((ch, open.clone())),
        }
    }
    out
}

/// Whether `parts` (visible texts) put end to end give `whole`, with only whitespace left
/// out where a part ended (the break it was cut at); the reason when not.
fn rejoins(whole: &str, parts: &[String]) -> Result<(), String> {
    let mut rest = whole;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            let ws = rest.len() - rest.trim_start().len();
            let skip = rest[..ws]
                .char_indices()
                .map(|(k, _)| k)
                .chain(std::iter::once(ws))
                .find(|&k| rest[k..].starts_with(part.as_str()))
                .ok_or_else(|| {
                    format!(
                        "part {i} {part:?} does not follow at {:?}",
                        &rest[..rest.len().min(40)]
                    )
                })?;
            rest = &rest[skip..];
        }
        rest = rest.strip_prefix(part.as_str()).ok_or_else(|| {
            format!(
                "part {i} {part:?} is not next in {:?}",
                &rest[..rest.len().min(40)]
            )
        })?;
    }
    match rest.trim().is_empty() {
        true => Ok(()),
        false => Err(format!("text left over: {rest:?}")),
    }
}

fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Catches: a code block cut by the limit continuing as plain text (its closing fence
/// then opening a new block) instead of as a code block in the next part.
#[test]
fn a_code_block_longer_than_a_part_is_reopened_in_each_part() {
    let code: String = (0..900).map(|i| format!("let x{i} = {i} < 3;\n")).collect();
    let text = format!("Here:\n\n```rust\n{code}```\n\n**done** after");
    let parts = message_parts(&text, Some("Stats: runtime 1s"), 4000);
    assert!(parts.len() >= 4, "{}", parts.len());
    for (i, part) in parts.iter().enumerate() {
        balanced(part).unwrap_or_else(|e| panic!("part {i}: {e}"));
        assert!(units(&visible_text(part)) <= 4000);
        if i > 0 && i + 1 < parts.len() {
            assert!(
                part.starts_with("<pre><code class=\"language-rust\">"),
                "part {i}: {}",
                &part[..60]
            );
        }
    }
    let last = parts.last().expect("at least one part");
    assert!(
        last.ends_with("<b>done</b> after\nStats: runtime 1s"),
        "{last}"
    );
    let texts: Vec<String> = parts.iter().map(|p| visible_text(p)).collect();
    let whole = format!("{}\nStats: runtime 1s", visible_text(&to_html(&text)));
    rejoins(&whole, &texts).expect("the parts rejoin");
    let in_code = |p: &String| {
        styled(p)
            .iter()
            .filter(|(c, tags)| !c.is_whitespace() && tags.contains(&"pre".to_string()))
            .count()
    };
    assert_eq!(
        parts.iter().map(in_code).sum::<usize>(),
        styled(&to_html(&text))
            .iter()
            .filter(|(c, t)| !c.is_whitespace() && t.contains(&"pre".to_string()))
            .count()
    );
}

#[test]
fn short_text_is_one_part_and_empty_text_one_empty_part() {
    assert_eq!(message_parts("**hi**", None, 4096), ["<b>hi</b>"]);
    assert_eq!(message_parts("", None, 4096), [""]);
    assert_eq!(message_parts("  ", Some("Stats: x"), 4096), ["Stats: x"]);
}

/// Catches: a cut inside an entity (`&amp;` split in two) or inside a surrogate pair, and
/// a limit counted in chars while Telegram counts UTF-16 units.
#[test]
fn hard_cuts_keep_entities_and_count_utf16() {
    let parts = split_html(&"&amp;🙂".repeat(100), 31);
    for p in &parts {
        assert!(units(&visible_text(p)) <= 31);
        assert!(!p.ends_with('&') && !p.contains("&am;"));
    }
    let texts: Vec<String> = parts.iter().map(|p| visible_text(p)).collect();
    assert_eq!(texts.concat(), "&🙂".repeat(100));
}

/// Catches: a part whose text is only whitespace (Telegram refuses an empty message).
#[test]
fn whitespace_only_parts_are_left_out() {
    let html = format!("a{}b", " ".repeat(100));
    for p in split_html(&html, 16) {
        assert!(!visible_text(&p).trim().is_empty(), "{p:?}");
    }
}

/// Markdown of prose, inline formatting and fenced code blocks, some longer than a part.
fn markdown() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        6 => "[a-zA-Z0-9]{1,12}",
        1 => Just("&".to_string()),
        1 => Just("<b>".to_string()),
        1 => Just("🙂".to_string()),
        1 => Just("é".to_string()),
    ];
    let line = prop::collection::vec(word, 1..20).prop_map(|w| w.join(" "));
    let styled = (line.clone(), 0..4usize).prop_map(|(l, k)| match k {
        0 => format!("**{l}**"),
        1 => format!("*{l}*"),
        2 => format!("`{l}`"),
        _ => l,
    });
    let code = (
        prop::sample::select(&["", "rust", "py", "weird lang!"][..]),
        prop::collection::vec("[ -~]{0,60}", 1..120),
    )
        .prop_map(|(lang, lines)| {
            format!("```{lang}\n{}\n```", lines.join("\n").replace("```", "'''"))
        });
    let block = prop_oneof![
        4 => prop::collection::vec(styled, 1..30).prop_map(|l| l.join("\n")),
        2 => code,
        1 => line.prop_map(|l| format!("# {l}")),
    ];
    prop::collection::vec(block, 1..8).prop_map(|b| b.join("\n\n"))
}

proptest! {
    // A tenth of the usual cases: each case is a whole message of up to some 20 KB.
    #![proptest_config(proptest::test_runner::Config {
        cases: (crate::proptest_cases::cases() / 10).max(100),
        ..crate::proptest_cases::config()
    })]

    /// Catches: a part with a tag left open or closed twice, a part over Telegram's limit,
    /// text lost or doubled at a cut, and a code block not reopened after a cut.
    #[test]
    fn parts_are_balanced_fit_and_keep_the_whole_text(
        text in markdown(),
        limit in prop_oneof![Just(4096usize), 64usize..600],
    ) {
        let whole = to_html(text.trim_end());
        let parts = message_parts(&text, None, limit);
        let mut texts = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            if let Err(e) = balanced(part) {
                return Err(TestCaseError::fail(format!("part {i}: {e}: {part}")));
            }
            let visible = visible_text(part);
            prop_assert!(units(&visible) <= limit.min(TELEGRAM_LIMIT), "part {} has {}", i, units(&visible));
            texts.push(visible);
        }
        if let Err(e) = rejoins(&visible_text(&whole), &texts) {
            return Err(TestCaseError::fail(e));
        }
        // Every visible character keeps its formatting: one inside a code block (or bold)
        // in the whole message is inside one in its part.
        let shown = |v: Vec<(char, Vec<String>)>| v.into_iter().filter(|(c, _)| !c.is_whitespace()).collect::<Vec<_>>();
        let parts_styled = shown(parts.iter().flat_map(|p| styled(p)).collect());
        prop_assert!(parts_styled == shown(styled(&whole)), "formatting changed at a cut");
    }

    /// Catches: a panic, or a part over the limit, on HTML the converter never writes.
    #[test]
    fn any_html_splits_without_panic(html in ".{0,400}", limit in 16usize..64) {
        for part in split_html(&html, limit) {
            prop_assert!(units(&visible_text(&part)) <= limit);
        }
    }
}
