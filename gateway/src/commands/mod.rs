//! Slash commands: parsed before routing and answered at once, even while the session's
//! run is busy. An unknown command or a bad argument gets a one-line usage reply.

pub mod approve;
pub mod compact;
pub mod cron;
pub mod menu;
pub mod model;
pub(crate) mod session;
pub mod subagents;

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
    /// `/compact [focus]`: summarize the older turns now.
    Compact(Option<String>),
    /// A command we do not know, or one with bad arguments: the usage line to answer.
    Usage(String),
    /// `/model …`: this session's model.
    Model(model::ModelCommand),
    /// `/think …`: this session's thinking level.
    Think(model::ThinkCommand),
}

pub const HELP: &str = "Commands:\n\
/help — this list\n\
/status — model, queue depth and active runs of this chat\n\
/new — start a fresh session (the old transcript is kept, archived)\n\
/stop — stop the current run of this chat and its sub-agents\n\
/subagents list | stop <#|id|all> | log <#|id> [limit] [tools] | info <#|id> | send <#|id> <message>\n\
/approve <id> allow-once|allow-always|deny — answer a command approval request\n\
/cron [list] | run <id> | enable <id> | disable <id> — the scheduled jobs\n\
/compact [focus] — summarize the older turns of this chat now\n\
/model [provider/model | default] — list or switch this session's model\n\
/think [off | low | medium | high | default] — this session's thinking level";

/// Parse `text` as a slash command. Returns `None` for ordinary messages. Accepts the
/// Telegram form `/cmd@botname`.
pub fn parse(text: &str) -> Option<Command> {
    let text = text.trim();
    let rest = text.strip_prefix('/')?;
    if rest.is_empty() || rest.starts_with(char::is_whitespace) || rest.starts_with('/') {
        return None;
    }
    let mut parts = rest.split_whitespace();
    let head = parts.next()?;
    let name = head.split('@').next().unwrap_or(head).to_ascii_lowercase();
    let args: Vec<&str> = parts.collect();
    let no_args = |cmd: Command, name: &str| {
        if args.is_empty() {
            cmd
        } else {
            Command::Usage(format!("Usage: /{name} (takes no arguments)"))
        }
    };
    Some(match name.as_str() {
        "help" => Command::Help,
        "status" => no_args(Command::Status, "status"),
        "new" | "reset" => no_args(Command::New, "new"),
        "stop" => no_args(Command::Stop, "stop"),
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
        other => Command::Usage(format!(
            "Unknown command /{}. Try /help, /status, /new, /stop or /subagents.",
            cut_name(other)
        )),
    })
}

/// `s` after its first `n` whitespace-separated words (and the whitespace after them).
pub(crate) fn after_words(s: &str, n: usize) -> &str {
    let mut rest = s.trim_start();
    for _ in 0..n {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        rest = rest[end..].trim_start();
    }
    rest
}

/// A command or action name as echoed in an answer: at most 32 characters.
pub(crate) fn cut_name(name: &str) -> String {
    const MAX: usize = 32;
    match name.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    }
}

/// Run a command for the chat at `origin` (session `session_key`); returns the answer.
pub async fn execute(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    origin: &Origin,
    cmd: Command,
) -> String {
    match cmd {
        Command::Help => HELP.to_string(),
        Command::Usage(u) => u,
        Command::Status => answer(session::status(rt, session_key, agent_id).await),
        Command::New => answer(session::new_session(rt, session_key).await),
        Command::Stop => answer(session::stop(rt, session_key).await),
        Command::Subagents(sub) => answer(subagents::execute(rt, session_key, sub).await),
        Command::Approve(id, decision) => answer(approve::execute(rt, origin, &id, decision).await),
        Command::Cron(c) => cron::execute(rt, c).await,
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
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_rejects_bad_ones() {
        assert_eq!(parse("hello"), None);
        assert_eq!(parse("/ hello"), None);
        assert_eq!(parse("/stop"), Some(Command::Stop));
        assert_eq!(parse("  /STOP@switchboard_bot "), Some(Command::Stop));
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
        assert!(
            matches!(parse("/frobnicate"), Some(Command::Usage(u)) if u.starts_with("Unknown command /frobnicate"))
        );
    }
}
