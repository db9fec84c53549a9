//! `/subagents list|stop|log|info|send` for the children spawned from this chat's session.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::{dispatch, AgentError};
use crate::runtime::run_ends::RunWait;
use crate::runtime::Runtime;
use crate::store::{now_ms, NewInbound, NewRun, Role, SubagentRow};
use crate::subagents::control::{self, resolve};
use crate::subagents::render;

use crate::text::{after_words, cut_name, short};

/// How long `/subagents send` waits for the child's answer.
const SEND_WAIT: Duration = Duration::from_secs(30);
/// Default and largest `/subagents log` length.
const LOG_DEFAULT: usize = 20;
const LOG_MAX: usize = 200;
/// Characters of a task shown in the list when there is no label.
const TASK_CUT: usize = 40;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubCommand {
    List,
    Stop(String),
    Log {
        target: String,
        limit: usize,
        tools: bool,
    },
    Info(String),
    Send {
        target: String,
        message: String,
    },
}

pub const USAGE: &str = "Usage: /subagents list | stop <#|id|all> | log <#|id> [limit] [tools] | info <#|id> | send <#|id> <message>";

/// Longest `<#|id>` accepted, in characters (a run id is 36).
const MAX_TARGET_CHARS: usize = 64;
/// Longest `/subagents send` message, in characters (as the HTTP API's `text`).
const MAX_SEND_CHARS: usize = 32_000;

/// Parse the words after `/subagents` (`args`; `raw_rest` is the same text unsplit, for
/// the spacing of a `send` message); `Err` is the one-line usage answer. Never panics,
/// whatever the two hold, and every answer is short.
pub fn parse(args: &[&str], raw_rest: &str) -> Result<SubCommand, String> {
    let Some(action) = args.first() else {
        return Err(USAGE.into());
    };
    let action = action.to_ascii_lowercase();
    let target = |usage: &str| match args.get(1) {
        Some(t) if t.chars().count() <= MAX_TARGET_CHARS => Ok(t.to_string()),
        Some(_) => Err(format!(
            "{usage} (a sub-agent is named by its number, like #2, or the start of its run id)"
        )),
        None => Err(usage.to_string()),
    };
    match action.as_str() {
        "list" | "ls" if args.len() == 1 => Ok(SubCommand::List),
        "list" | "ls" => Err("Usage: /subagents list (takes no arguments)".into()),
        "stop" | "kill" => Ok(SubCommand::Stop(target(
            "Usage: /subagents stop <#|id|all>",
        )?)),
        "info" => Ok(SubCommand::Info(target("Usage: /subagents info <#|id>")?)),
        "log" => {
            let target = target("Usage: /subagents log <#|id> [limit] [tools]")?;
            let mut limit = LOG_DEFAULT;
            let mut tools = false;
            for a in args.iter().skip(2) {
                if a.eq_ignore_ascii_case("tools") {
                    tools = true;
                } else if let Ok(n) = a.parse::<usize>() {
                    if n == 0 || n > LOG_MAX {
                        return Err(format!(
                            "Usage: /subagents log <#|id> [limit 1-{LOG_MAX}] [tools]"
                        ));
                    }
                    limit = n;
                } else {
                    return Err("Usage: /subagents log <#|id> [limit] [tools]".into());
                }
            }
            Ok(SubCommand::Log {
                target,
                limit,
                tools,
            })
        }
        "send" => {
            let target = target("Usage: /subagents send <#|id> <message>")?;
            // The message is the raw text after the action and the target (keeps its spacing).
            let message = after_words(raw_rest, 2).trim();
            if message.is_empty() {
                return Err("Usage: /subagents send <#|id> <message>".into());
            }
            if message.chars().nth(MAX_SEND_CHARS).is_some() {
                return Err(format!(
                    "The message is longer than {MAX_SEND_CHARS} characters."
                ));
            }
            Ok(SubCommand::Send {
                target,
                message: message.to_string(),
            })
        }
        other => Err(format!(
            "Unknown /subagents action `{}`. {USAGE}",
            cut_name(other)
        )),
    }
}

pub async fn execute(
    rt: &Arc<Runtime>,
    session_key: &str,
    cmd: SubCommand,
) -> Result<String, AgentError> {
    let rows = rt.store.subagents_of(session_key, 1000).await?;
    match cmd {
        SubCommand::List => Ok(list(&rows)),
        SubCommand::Stop(t) if t.eq_ignore_ascii_case("all") => {
            let n = control::stop_children_of(rt, session_key, "stopped by /subagents stop all")
                .await?;
            Ok(format!("Stopped {n} sub-agent{}.", plural(n)))
        }
        SubCommand::Stop(t) => {
            let row = match resolve(&rows, &t) {
                Ok(r) => r,
                Err(e) => return Ok(e.to_string()),
            };
            if control::stop_child(rt, row, "stopped by /subagents stop").await? {
                Ok(format!(
                    "Stopping sub-agent {} ({}).",
                    short(&row.run_id),
                    title(row)
                ))
            } else {
                Ok(format!(
                    "Sub-agent {} is not running ({}).",
                    short(&row.run_id),
                    state(row)
                ))
            }
        }
        SubCommand::Info(t) => Ok(match resolve(&rows, &t) {
            Ok(row) => info(row),
            Err(e) => e.to_string(),
        }),
        SubCommand::Log {
            target,
            limit,
            tools,
        } => {
            let row = match resolve(&rows, &target) {
                Ok(r) => r,
                Err(e) => return Ok(e.to_string()),
            };
            let msgs = rt.store.transcript(&row.session_id).await?;
            let msgs: Vec<_> = msgs
                .iter()
                .filter(|m| {
                    if tools {
                        m.role == Role::Tool || !m.tool_calls.is_empty()
                    } else {
                        m.role != Role::Tool
                    }
                })
                .collect();
            let start = msgs.len().saturating_sub(limit);
            let mut out = format!(
                "Log of sub-agent {} ({}), last {} message(s):",
                short(&row.run_id),
                title(row),
                msgs.len() - start
            );
            for m in &msgs[start..] {
                let mut line = match m.role {
                    Role::Tool => format!(
                        "[tool {}] {}",
                        m.tool_name.as_deref().unwrap_or("?"),
                        m.content
                    ),
                    _ => format!("[{}] {}", m.role.as_str(), m.content),
                };
                for c in &m.tool_calls {
                    line.push_str(&format!(" → {}({})", c.name, c.arguments));
                }
                out.push('\n');
                out.push_str(&cut(&line, 500));
            }
            Ok(out)
        }
        SubCommand::Send { target, message } => {
            let row = match resolve(&rows, &target) {
                Ok(r) => r.clone(),
                Err(e) => return Ok(e.to_string()),
            };
            send(rt, &row, &message).await
        }
    }
}

async fn send(rt: &Arc<Runtime>, row: &SubagentRow, message: &str) -> Result<String, AgentError> {
    if row.archived_at.is_some() {
        return Ok(format!(
            "Sub-agent {} is archived; its session no longer takes messages.",
            short(&row.run_id)
        ));
    }
    let mut run_ends = rt.events.run_ends.subscribe(&row.child_session_key);
    let session = rt
        .store
        .ensure_session(&row.child_session_key, &row.agent_id, None)
        .await?;
    let origin = switchboard_channels::Origin {
        channel: crate::store::INTERNAL_CHANNEL.into(),
        account: None,
        chat_id: row.requester_session_key.clone(),
        thread_id: None,
        kind: switchboard_channels::ChatKind::Direct,
        reply_handle: None,
    };
    // The message and, unless one is queued for the child already, the run that takes it
    // commit together: a crash cannot leave the message without a run.
    let lane = rt.lanes.get(crate::queue::SUBAGENT);
    let run_id = uuid::Uuid::new_v4().to_string();
    let run = (!lane.has_queued(&row.child_session_key)).then(|| NewRun {
        id: &run_id,
        session_key: &row.child_session_key,
        session_id: &session.id,
        agent_id: &row.agent_id,
        lane: crate::queue::SUBAGENT,
        claim_all: true,
        origin: None,
        model: row.model.as_deref(),
        timeout_ms: None,
    });
    let inbound = NewInbound {
        session_key: &row.child_session_key,
        origin: &origin,
        sender_id: &row.requester_session_key,
        text: message,
        message_id: None,
    };
    let Some((inbox_id, queued)) = rt.store.accept_message(&inbound, run.as_ref()).await? else {
        return Err(AgentError::DuplicateWithoutId);
    };
    if let Some(queued) = queued {
        dispatch::schedule_row(rt, queued);
    }
    Ok(
        match run_ends.wait_for_claiming_run(inbox_id, SEND_WAIT).await {
            RunWait::Ended(end) => match &end.reply {
                Some(reply) => format!("Sub-agent {} replied:\n{reply}", short(&row.run_id)),
                None => format!(
                    "Sub-agent {} ended without a reply ({}).",
                    short(&row.run_id),
                    end.status.as_str()
                ),
            },
            _ => format!(
                "Sub-agent {} is still running; see /subagents log {} later.",
                short(&row.run_id),
                short(&row.run_id)
            ),
        },
    )
}

fn list(rows: &[SubagentRow]) -> String {
    if rows.is_empty() {
        return "No sub-agents have been spawned from this chat.".into();
    }
    let active = rows.iter().filter(|r| r.outcome.is_none()).count();
    let mut out = format!("Sub-agents: {active} active, {} done", rows.len() - active);
    for (i, r) in rows.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. {} · {} · {} · {} · {}",
            i + 1,
            state(r),
            title(r),
            render::runtime(runtime(r)),
            short(&r.run_id),
            r.child_session_key
        ));
    }
    out
}

fn info(r: &SubagentRow) -> String {
    let now = now_ms();
    let time = |t: Option<i64>| {
        t.map(|t| {
            format!(
                "{} ({} ago)",
                iso(t),
                render::runtime(Duration::from_millis((now - t).max(0) as u64))
            )
        })
        .unwrap_or_else(|| "—".into())
    };
    let archive = match (r.archived_at, r.archive_at) {
        (Some(t), _) => format!("archived {}", time(Some(t))),
        (None, Some(t)) if t > now => format!(
            "at {} (in {})",
            iso(t),
            render::runtime(Duration::from_millis((t - now) as u64))
        ),
        (None, Some(t)) => format!("due {}", iso(t)),
        (None, None) => "never (or not yet scheduled)".into(),
    };
    format!(
        "Sub-agent {}\nStatus: {}\nLabel: {}\nTask: {}\nAgent: {}\nModel: {}\nThinking: {}\nChild session: {} ({})\nRequester: {}\nCleanup: {}\nRun timeout: {}\nCreated: {}\nStarted: {}\nEnded: {}\nRuntime: {}\nTokens: in {} / out {}{}\nError: {}\nAnnounce: {} ({} attempts)\nArchive: {}\nTranscript: /api/sessions/{}/transcript?sessionId={}",
        r.run_id,
        state(r),
        r.label.as_deref().unwrap_or("—"),
        cut(&r.task, 300),
        r.agent_id,
        r.model.as_deref().unwrap_or("default"),
        r.thinking.as_deref().unwrap_or("—"),
        r.child_session_key,
        r.session_id,
        r.requester_session_key,
        r.cleanup,
        if r.run_timeout_seconds > 0 { format!("{}s", r.run_timeout_seconds) } else { "none".into() },
        time(Some(r.created_at)),
        time(r.started_at),
        time(r.ended_at),
        render::runtime(runtime(r)),
        r.input_tokens,
        r.output_tokens,
        r.cost_usd.map(|c| format!(" · est ${c:.4}")).unwrap_or_default(),
        r.error.as_deref().or(r.stop_note.as_deref()).unwrap_or("—"),
        r.announce_state,
        r.announce_attempts,
        archive,
        r.child_session_key,
        r.session_id,
    )
}

fn state(r: &SubagentRow) -> String {
    match &r.outcome {
        Some(o) => o.to_string(),
        None => r.status.as_str().to_string(),
    }
}

fn title(r: &SubagentRow) -> String {
    r.label.clone().unwrap_or_else(|| cut(&r.task, TASK_CUT))
}

fn runtime(r: &SubagentRow) -> Duration {
    let start = r.started_at.unwrap_or(r.created_at);
    let end = r.ended_at.unwrap_or_else(|| {
        if r.started_at.is_some() {
            now_ms()
        } else {
            start
        }
    });
    Duration::from_millis((end - start).max(0) as u64)
}

fn cut(s: &str, n: usize) -> String {
    let one_line = s.replace('\n', " ");
    if one_line.chars().count() > n {
        format!("{}…", one_line.chars().take(n).collect::<String>())
    } else {
        one_line
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Unix ms → `2026-11-22T21:04:05Z`.
fn iso(ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_actions_and_gives_usage_lines() {
        assert_eq!(parse(&["list"], "list"), Ok(SubCommand::List));
        assert_eq!(
            parse(&["stop", "all"], "stop all"),
            Ok(SubCommand::Stop("all".into()))
        );
        assert_eq!(
            parse(&["log", "2", "5", "tools"], "log 2 5 tools"),
            Ok(SubCommand::Log {
                target: "2".into(),
                limit: 5,
                tools: true
            })
        );
        assert_eq!(
            parse(&["send", "#1", "hello", "there"], "send #1 hello  there"),
            Ok(SubCommand::Send {
                target: "#1".into(),
                message: "hello  there".into()
            })
        );
        assert_eq!(parse(&[], ""), Err(USAGE.to_string()));
        assert_eq!(
            parse(&["info"], "info"),
            Err("Usage: /subagents info <#|id>".to_string())
        );
        assert_eq!(
            parse(&["send", "1"], "send 1"),
            Err("Usage: /subagents send <#|id> <message>".to_string())
        );
        assert!(parse(&["log", "1", "x"], "log 1 x").is_err());
        assert!(parse(&["frob"], "frob")
            .unwrap_err()
            .starts_with("Unknown /subagents action `frob`"));
    }
}

#[cfg(test)]
#[path = "command_send_tests.rs"]
mod send_tests;
