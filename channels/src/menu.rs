//! The command menu a platform offers (Telegram's command list, Discord's application
//! commands), handed to adapters as data by the gateway, which owns the commands: names,
//! descriptions and, where a platform has them, options with their choices.

/// One command of the menu, e.g. `/subagents` with its `action`, `target` and `message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuCommand {
    /// The name without the slash, e.g. `status`.
    pub name: String,
    pub description: String,
    /// Arguments, in the order they follow the name when the command is typed as text.
    pub options: Vec<MenuOption>,
    /// Other names the gateway takes for it when typed (not shown in menus).
    pub aliases: Vec<String>,
}

/// A text argument of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuOption {
    pub name: String,
    pub description: String,
    pub required: bool,
    /// The values offered to pick from (empty: free text).
    pub choices: Vec<String>,
}

impl MenuCommand {
    /// A command without options.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        MenuCommand {
            name: name.into(),
            description: description.into(),
            options: Vec::new(),
            aliases: Vec::new(),
        }
    }

    /// This command, also taken when typed as `/alias`.
    pub fn alias(mut self, alias: impl Into<String>) -> Self {
        self.aliases.push(alias.into());
        self
    }

    /// Whether `name` (any case) is this command's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
    pub fn option(mut self, option: MenuOption) -> Self {
        self.options.push(option);
        self
    }
}

impl MenuOption {
    /// An optional free-text argument.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        MenuOption {
            name: name.into(),
            description: description.into(),
            required: false,
            choices: Vec::new(),
        }
    }

    /// This argument, required.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// This argument, picked from `choices`.
    pub fn choices<S: AsRef<str>>(mut self, choices: &[S]) -> Self {
        self.choices = choices.iter().map(|c| c.as_ref().to_string()).collect();
        self
    }
}

/// The menu command `text` starts with (`/name`, or `/name@bot` when `bot` names this
/// bot, any case), if it names one: a slash command for this bot rather than a message
/// that happens to start with `/` ("/usr/bin/python3 crashed") or another bot's command.
pub fn command_in<'m>(
    menu: &'m [MenuCommand],
    text: &str,
    bot: Option<&str>,
) -> Option<&'m MenuCommand> {
    let head = text.strip_prefix('/')?.split(char::is_whitespace).next()?;
    let name = match head.split_once('@') {
        Some((name, to)) if bot.is_some_and(|b| !b.is_empty() && b.eq_ignore_ascii_case(to)) => {
            name
        }
        Some(_) => return None,
        None => head,
    };
    menu.iter().find(|c| c.answers_to(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: any text starting with `/` taken for a command, an alias missed, and
    /// another bot's `/cmd@other` taken for ours.
    #[test]
    fn only_menu_commands_for_this_bot_are_commands() {
        let menu = vec![MenuCommand::new("new", "New").alias("reset")];
        let found = |t: &str| command_in(&menu, t, Some("me_bot")).map(|c| c.name.as_str());
        assert_eq!(found("/new"), Some("new"));
        assert_eq!(found("/RESET now"), Some("new"));
        assert_eq!(found("/new@Me_Bot"), Some("new"));
        assert_eq!(found("/new@other_bot"), None);
        assert_eq!(found("/usr/bin/python3 crashed"), None);
        assert_eq!(found("/ new"), None);
        assert_eq!(found("new"), None);
        assert_eq!(command_in(&menu, "/new@", None), None);
    }
}
