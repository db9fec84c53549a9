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
        }
    }

    /// This command with `option` after its other options.
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
