//! The one table of slash commands: each command's name, aliases, usage, description and
//! menu options. `parse` reads only the names listed here (anything else that starts
//! with `/` is an ordinary message for the agent), `/help` is rendered from it, and the
//! menus registered on Telegram and Discord are built from it, so a command added here
//! appears everywhere at once.

use switchboard_channels::{MenuCommand, MenuOption};

/// One slash command.
#[derive(Debug)]
pub struct CommandSpec {
    /// The name without the slash, lowercase, as the menus show it.
    pub name: &'static str,
    /// Other names `parse` takes for it (not shown in the menus).
    pub aliases: &'static [&'static str],
    /// The typed form with its arguments, as `/help` shows it.
    pub usage: &'static str,
    /// One line saying what it does: `/help` and the menus (Discord: 1–100 characters).
    pub about: &'static str,
    /// Arguments, in the order they follow the name when typed (Discord shows them).
    pub options: &'static [OptionSpec],
}

/// One argument of a command in the menus.
#[derive(Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub required: bool,
    /// Values offered to pick from (empty: free text).
    pub choices: &'static [&'static str],
}

const fn opt(name: &'static str, description: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        description,
        required: false,
        choices: &[],
    }
}

/// Every command, in the order `/help` and the menus list them.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "help",
        aliases: &[],
        usage: "/help",
        about: "this list",
        options: &[],
    },
    CommandSpec {
        name: "status",
        aliases: &[],
        usage: "/status",
        about: "model, context fill, today's cost, queue depth and active runs of this chat",
        options: &[],
    },
    CommandSpec {
        name: "usage",
        aliases: &[],
        usage: "/usage",
        about: "this session's tokens, cost and context fill, and today's totals",
        options: &[],
    },
    CommandSpec {
        name: "new",
        aliases: &["reset"],
        usage: "/new",
        about: "start a fresh session (the old transcript is kept, archived)",
        options: &[],
    },
    CommandSpec {
        name: "stop",
        aliases: &[],
        usage: "/stop",
        about: "stop the current run of this chat and its sub-agents",
        options: &[],
    },
    CommandSpec {
        name: "subagents",
        aliases: &["subagent"],
        usage: "/subagents list | stop <#|id|all> | log <#|id> [limit] [tools] | info <#|id> | send <#|id> <message>",
        about: "the sub-agents of this chat",
        options: &[
            OptionSpec {
                name: "action",
                description: "What to do",
                required: true,
                // `subagents::parse` also takes the aliases `ls` and `kill`.
                choices: &["list", "stop", "log", "info", "send"],
            },
            opt("target", "# or run id (or all for stop)"),
            opt("message", "Message for send"),
        ],
    },
    CommandSpec {
        name: "approve",
        aliases: &[],
        usage: "/approve <id> allow-once|allow-always|deny",
        about: "answer a command approval request",
        options: &[
            OptionSpec {
                name: "id",
                description: "The request's id",
                required: true,
                choices: &[],
            },
            OptionSpec {
                name: "decision",
                description: "Your answer",
                required: true,
                choices: &["allow-once", "allow-always", "deny"],
            },
        ],
    },
    CommandSpec {
        name: "cron",
        aliases: &[],
        usage: "/cron [list] | run <id> | enable <id> | disable <id>",
        about: "the scheduled jobs",
        options: &[
            OptionSpec {
                name: "action",
                description: "What to do (default: list)",
                required: false,
                choices: &["list", "run", "enable", "disable"],
            },
            opt("id", "The job's id (for run, enable, disable)"),
        ],
    },
    CommandSpec {
        name: "compact",
        aliases: &[],
        usage: "/compact [focus]",
        about: "summarize the older turns of this chat now",
        options: &[opt("focus", "What the summary should keep")],
    },
    CommandSpec {
        name: "model",
        aliases: &[],
        usage: "/model [provider/model | default]",
        about: "list or switch this session's model",
        options: &[opt("model", "provider/model, or default")],
    },
    CommandSpec {
        name: "think",
        aliases: &[],
        usage: "/think [off | low | medium | high | default]",
        about: "this session's thinking level",
        options: &[OptionSpec {
            name: "level",
            description: "How hard the model thinks",
            required: false,
            choices: &["off", "low", "medium", "high", "default"],
        }],
    },
];

/// The command called `name` (lowercase) or one of its aliases.
pub fn find(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))
}

/// The `/help` answer.
pub fn help() -> String {
    let mut out = String::from("Commands:");
    for c in COMMANDS {
        out.push_str(&format!("\n{} — {}", c.usage, c.about));
    }
    out
}

/// The menu registered on platforms that have one, in the table's order.
pub fn menu() -> Vec<MenuCommand> {
    COMMANDS
        .iter()
        .map(|c| {
            let about = capitalized(c.about);
            let cmd = c
                .aliases
                .iter()
                .fold(MenuCommand::new(c.name, about), |m, a| m.alias(*a));
            c.options.iter().fold(cmd, |m, o| {
                let mut option = MenuOption::new(o.name, o.description).choices(o.choices);
                if o.required {
                    option = option.required();
                }
                m.option(option)
            })
        })
        .collect()
}

/// `s` with its first letter uppercase (menus show a description on its own).
fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
