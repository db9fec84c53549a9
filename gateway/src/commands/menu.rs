//! The command menu registered on platforms that have one (Telegram's command list,
//! Discord's application commands), as data the adapters turn into their platform's
//! form: the commands `parse` knows, and `/subagents`' arguments with its actions.

use switchboard_channels::{MenuCommand, MenuOption};

/// The `/subagents` actions the menu offers (`subagents::parse` also takes the aliases
/// `ls` and `kill`).
const ACTIONS: [&str; 5] = ["list", "stop", "log", "info", "send"];

/// The menu, in the order platforms show it.
pub fn menu() -> Vec<MenuCommand> {
    vec![
        MenuCommand::new("subagents", "Sub-agents: list | stop | log | info | send")
            .option(
                MenuOption::new("action", "What to do")
                    .required()
                    .choices(&ACTIONS),
            )
            .option(MenuOption::new("target", "# or run id (or all for stop)"))
            .option(MenuOption::new("message", "Message for send")),
        MenuCommand::new("stop", "Stop the current run and its sub-agents"),
        MenuCommand::new("status", "Model, queue and active runs"),
        MenuCommand::new("new", "Start a fresh session"),
        MenuCommand::new("help", "Show the commands"),
        MenuCommand::new("compact", "Summarize the older turns now")
            .option(MenuOption::new("focus", "What the summary should keep")),
        MenuCommand::new("model", "List or switch this chat's model")
            .option(MenuOption::new("model", "provider/model, or default")),
        MenuCommand::new("think", "This chat's thinking level").option(
            MenuOption::new("level", "How hard the model thinks")
                .choices(&["off", "low", "medium", "high", "default"]),
        ),
    ]
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
