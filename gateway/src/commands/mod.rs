//! Slash commands: parsed before routing and answered at once, even while the session's
//! run is busy. A known command with a bad argument gets a one-line usage reply; text
//! that starts with `/` but names no command of `table::COMMANDS` is an ordinary message.

pub mod approve;
pub mod compact;
pub mod cron;
pub mod menu;
pub mod model;
pub(crate) mod session;
/// `/subagents`: parsed and run by the sub-agents themselves (`subagents::command`).
pub use crate::subagents::command as subagents;
pub mod table;
pub(crate) mod usage;

use std::sync::Arc;

use switchboard_channels::Origin;

use crate::runtime::Runtime;

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    Status,
    New,
    Stop,
    Subagents(subagents::SubCommand),
    /// `/approve <id> <decision>`: answer an exec approval request of this chat.
    Approve(String, approve::Decision),
    /// `/cron …`: the scheduled jobs.
    Cron(cron::CronCommand),
    /// A known command with bad arguments: the usage line to answer.
    Usage(String),
    /// `/usage`: this session's tokens, cost and context fill, and today's totals.
    ShowUsage,
    /// `/compact [focus]`: summarize the older turns now.
    Compact(Option<String>),
    /// `/model …`: this session's model.
    Model(model::ModelCommand),
    /// `/think …`: this session's thinking level.
    Think(model::ThinkCommand),
}

impl Command {
    /// The name of this command in `table::COMMANDS` (`None` for a usage answer). The
    /// match is exhaustive so a new variant must name its table entry.
    pub fn name(&self) -> Option<&'static str> {
        Some(match self {
            Command::Help => "help",
            Command::Status => "status",
            Command::New => "new",
            Command::Stop => "stop",
            Command::Subagents(_) => "subagents",
            Command::Approve(..) => "approve",
            Command::Cron(_) => "cron",
            Command::Usage(_) => return None,
            Command::ShowUsage => "usage",
            Command::Compact(_) => "compact",
            Command::Model(_) => "model",
            Command::Think(_) => "think",
        })
    }
}

/// Parse `text` as a slash command. Returns `None` for ordinary messages, which are any
/// text whose first word is not `/` + a name or alias of `table::COMMANDS`
/// ("/usr/bin/python3 crashed" is a message for the agent). A name with an `@bot`
/// suffix is a command for another bot (the Telegram adapter removes this bot's own
/// suffix), so not one of ours either.
pub fn parse(text: &str) -> Option<Command> {
    let text = text.trim();
    let rest = text.strip_prefix('/')?;
    let mut parts = rest.split_whitespace();
    let head = parts.next()?;
    if !rest.starts_with(head) {
        return None;
    }
    let name = table::find(&head.to_ascii_lowercase())?.name;
    let args: Vec<&str> = parts.collect();
    let no_args = |cmd: Command, name: &str| {
        if args.is_empty() {
            cmd
        } else {
            Command::Usage(format!("Usage: /{name} (takes no arguments)"))
        }
    };
    Some(match name {
        "help" => Command::Help,
        "status" => no_args(Command::Status, "status"),
        "new" | "reset" => no_args(Command::New, "new"),
        "stop" => no_args(Command::Stop, "stop"),
        "usage" => no_args(Command::ShowUsage, "usage"),
        "subagents" | "subagent" => match subagents::parse(&args, after_words(rest, 1)) {
            Ok(sub) => Command::Subagents(sub),
            Err(usage) => Command::Usage(usage),
        },
        "approve" => match approve::parse(&args) {
            Ok((id, decision)) => Command::Approve(id, decision),
            Err(usage) => Command::Usage(usage),
        },
        "cron" => match cron::parse(&args) {
            Ok(c) => Command::Cron(c),
            Err(usage) => Command::Usage(usage),
        },
        "compact" => {
            let focus = after_words(rest, 1);
            Command::Compact(
                (!focus.is_empty())
                    .then(|| crate::text::head(focus, compact::MAX_FOCUS).to_string()),
            )
        }
        "model" => match model::parse_model(&args) {
            Ok(c) => Command::Model(c),
            Err(usage) => Command::Usage(usage),
        },
        "think" => match model::parse_think(&args) {
            Ok(c) => Command::Think(c),
            Err(usage) => Command::Usage(usage),
        },
        // A table entry without a parser: `table_tests` fails on it.
        other => return unhandled(other),
    })
}

fn unhandled(name: &str) -> Option<Command> {
    tracing::error!(command = name, "a command of the table has no parser");
    None
}

pub(crate) use crate::text::{after_words, cut_name};

/// Run a command for the chat at `origin` (session `session_key`); returns the answer.
pub async fn execute(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    origin: &Origin,
    cmd: Command,
) -> String {
    match cmd {
        Command::Help => table::help(),
        Command::Usage(u) => u,
        Command::Status => answer(session::status(rt, session_key, agent_id).await),
        Command::New => answer(session::new_session(rt, session_key).await),
        Command::Stop => answer(session::stop(rt, session_key).await),
        Command::Subagents(sub) => answer(subagents::execute(rt, session_key, sub).await),
        Command::Approve(id, decision) => answer(approve::execute(rt, origin, &id, decision).await),
        Command::Cron(c) => cron::execute(rt, c).await,
        Command::ShowUsage => answer(usage::usage(rt, session_key, agent_id).await),
        Command::Compact(focus) => {
            answer(compact::execute(rt, session_key, agent_id, focus.as_deref()).await)
        }
        Command::Model(c) => answer(model::execute_model(rt, session_key, agent_id, c).await),
        Command::Think(c) => answer(model::execute_think(rt, session_key, agent_id, c).await),
    }
}

/// A command's answer, or what went wrong.
fn answer<E: std::fmt::Display>(result: Result<String, E>) -> String {
    result.unwrap_or_else(|e| format!("⚠️ {e}"))
}

#[cfg(test)]
mod parse_tests;
#[cfg(test)]
mod table_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_rejects_bad_ones() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/ hello"), None);
        assert_eq!(parse("/stop"), Some(Command::Stop));
        assert_eq!(parse("  /STOP "), Some(Command::Stop));
        assert_eq!(parse("/reset"), Some(Command::New));
        assert_eq!(parse("/new"), Some(Command::New));
        assert_eq!(parse("/compact"), Some(Command::Compact(None)));
        assert_eq!(
            parse("/compact  the plan  "),
            Some(Command::Compact(Some("the plan".into())))
        );
        assert_eq!(
            parse("/stop now"),
            Some(Command::Usage("Usage: /stop (takes no arguments)".into()))
        );
        assert_eq!(parse("/frobnicate"), None);
        assert_eq!(parse("/usr/bin/python3 crashed, why?"), None);
        assert_eq!(parse("/stop@another_bot"), None);
    }
}
