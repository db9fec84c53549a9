//! The command menu registered on platforms that have one (Telegram's command list,
//! Discord's application commands), as data the adapters turn into their platform's
//! form: every command `parse` knows, with its arguments and their choices, from the one
//! table in `table.rs`.

use switchboard_channels::MenuCommand;

/// The menu, in the order platforms show it: every command of `table::COMMANDS`.
pub fn menu() -> Vec<MenuCommand> {
    super::table::menu()
}

#[cfg(test)]
mod tests {
    use super::super::{parse, Command};
    use super::*;

    /// Catches: a menu entry (or an offered `/subagents` action) that the parser does not
    /// know, which a user picking it from the menu would get "Unknown command" for.
    #[test]
    fn every_menu_entry_parses() {
        for c in menu() {
            let typed = format!("/{}", c.name);
            let parsed = parse(&typed);
            assert!(
                !matches!(&parsed, Some(Command::Usage(u)) if u.starts_with("Unknown")),
                "{typed}: {parsed:?}"
            );
            for choice in c.options.iter().flat_map(|o| &o.choices) {
                let typed = format!("/{} {choice}", c.name);
                let parsed = parse(&typed);
                assert!(
                    !matches!(&parsed, Some(Command::Usage(u)) if u.starts_with("Unknown")),
                    "{typed}: {parsed:?}"
                );
            }
        }
    }
}
