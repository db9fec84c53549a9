//! The command table against its users: every command `parse` reads is in the table, in
//! `/help` and in the menus, and every table entry (and alias) parses to its own command.

use super::table::{self, COMMANDS};
use super::{menu, parse, Command};

/// Catches: a command added to the parser (or the table) but missing from `/help` or
/// from Telegram's and Discord's menus, and a table entry `parse` has no arm for.
#[test]
fn every_command_is_parsed_listed_in_help_and_in_the_menu() {
    let help = table::help();
    let menu = menu::menu();
    for spec in COMMANDS {
        for typed in std::iter::once(&spec.name).chain(spec.aliases) {
            let parsed = parse(&format!("/{typed}"));
            let name = match &parsed {
                Some(Command::Usage(_)) => Some(spec.name),
                Some(cmd) => cmd.name(),
                None => None,
            };
            assert_eq!(name, Some(spec.name), "/{typed} parsed as {parsed:?}");
        }
        assert!(
            help.lines()
                .any(|l| l.starts_with(&format!("/{} ", spec.name))
                    || l == format!("/{}", spec.name)
                    || l.starts_with(&format!("/{} —", spec.name))),
            "/{} not in /help:\n{help}",
            spec.name
        );
        let entry = menu.iter().find(|m| m.name == spec.name);
        let entry = entry.unwrap_or_else(|| panic!("/{} not in the menu", spec.name));
        assert_eq!(
            entry
                .options
                .iter()
                .map(|o| o.name.as_str())
                .collect::<Vec<_>>(),
            spec.options.iter().map(|o| o.name).collect::<Vec<_>>()
        );
    }
    assert_eq!(menu.len(), COMMANDS.len());
}

/// Catches: a command variant whose `name()` is not a table entry (a command parsed from
/// text the menus and `/help` would not show).
#[test]
fn every_command_name_is_a_table_entry() {
    let samples = [
        "/help",
        "/status",
        "/new",
        "/stop",
        "/subagents list",
        "/approve 1 deny",
        "/cron",
        "/usage",
    ];
    for text in samples {
        let cmd = parse(text).unwrap_or_else(|| panic!("{text} did not parse"));
        let name = cmd.name().unwrap_or_else(|| panic!("{text}: {cmd:?}"));
        assert!(table::find(name).is_some(), "{name}");
    }
}

/// Catches: menu entries Telegram or Discord refuse (Discord: lowercase names of 1–32
/// characters, descriptions of 1–100, required options first; Telegram: descriptions up
/// to 256), which would leave the whole menu unregistered.
#[test]
fn the_menu_fits_both_platforms() {
    for c in menu::menu() {
        assert!(
            (1..=32).contains(&c.name.len())
                && c.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{}",
            c.name
        );
        assert!(
            (1..=100).contains(&c.description.chars().count()),
            "{}",
            c.description
        );
        let first_optional = c.options.iter().position(|o| !o.required);
        if let Some(i) = first_optional {
            assert!(c.options[i..].iter().all(|o| !o.required), "/{}", c.name);
        }
        for o in &c.options {
            assert!((1..=100).contains(&o.description.chars().count()));
            assert!(o.choices.len() <= 25);
        }
    }
}

/// Catches: text that merely starts with `/` taken for a command, and `/cmd@otherbot`
/// taken for ours.
#[test]
fn slash_text_that_names_no_command_is_a_message() {
    for text in [
        "/usr/bin/python3 crashed, why?",
        "/frobnicate now",
        "/ status",
        "//status",
        "/status@another_bot",
        "/",
        "/é",
    ] {
        assert_eq!(parse(text), None, "{text}");
    }
    assert_eq!(
        parse("/stop now"),
        Some(Command::Usage("Usage: /stop (takes no arguments)".into()))
    );
}
