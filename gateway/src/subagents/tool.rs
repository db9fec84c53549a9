//! The model-facing `subagents` tool (README, Sub-agents), for the requester only:
//! `list` its children, `wait` (bounded) until the named ones — or all of this session's
//! active ones and those this run spawned — have ended and announced, `stop` one or all, `send` one a message. `list`
//! and `wait` give each child in one normalized shape.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio::sync::broadcast;

use super::command::{execute, SubCommand};
use super::{control, render};
use crate::agent::provider::ToolSpec;
use crate::agent::tools::{args, Tool, ToolContext, ToolError};
use crate::events::Event;
use crate::runtime::Runtime;
use crate::store::{AnnounceState, Outcome, Role, StoreError, SubagentRow};

/// `wait`'s bound when `timeoutSeconds` is not given.
pub const DEFAULT_WAIT_SECS: u64 = 60;
/// Longest `wait`.
pub const MAX_WAIT_SECS: u64 = 600;
/// How often `wait` looks again when no event woke it.
const RECHECK: Duration = Duration::from_secs(1);
/// Longest `send` message, in characters.
const MAX_MESSAGE_CHARS: usize = 32_000;
/// Longest `target`, in characters.
const MAX_TARGET_CHARS: usize = 64;
/// Most children a session's tool looks at (newest first).
const MAX_CHILDREN: i64 = 1000;

/// Whether a child has ended and its announce is settled (its result is final).
fn settled(r: &SubagentRow) -> bool {
    r.outcome.is_some() && r.announce_state != AnnounceState::Pending
}

/// One child as `list` and `wait` give it. `result`: its last answer (the announce step's,
/// or its final reply), when it has ended.
fn normalized(index: usize, r: &SubagentRow, result: Option<String>) -> Value {
    let state = match (&r.outcome, r.started_at) {
        (Some(_), _) => "done",
        (None, Some(_)) => "running",
        (None, None) => "queued",
    };
    let notes = match r.outcome {
        Some(Outcome::Cancelled) => r.stop_note.clone().or_else(|| r.error.clone()),
        _ => r.error.clone(),
    };
    json!({
        "index": index,
        "runId": r.run_id,
        "label": r.label,
        "agentId": r.agent_id,
        "task": r.task.chars().take(200).collect::<String>(),
        "state": state,
        "status": r.outcome.map(|o| render::status_of(o.as_str())),
        "outcome": r.outcome.map(Outcome::as_str),
        "result": result,
        "notes": notes,
        "announce": r.announce_state.as_str(),
    })
}

/// The child's last answer, if it has ended (an `ANNOUNCE_SKIP` is not an answer).
async fn result_of(rt: &Runtime, r: &SubagentRow) -> Result<Option<String>, StoreError> {
    if r.outcome.is_none() {
        return Ok(None);
    }
    let rows = rt.store.transcript_tail(&r.session_id, 20).await?;
    Ok(rows
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.content.trim())
        .find(|c| !c.is_empty() && *c != super::announce::SKIP)
        .map(str::to_string))
}

pub struct Subagents;

#[async_trait]
impl Tool for Subagents {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "subagents".into(),
            description: "Manage the sub-agents you spawned. `list`: each one's state and result. `wait`: block until \
                `target` (or every active one and every one this turn spawned) has ended, at most `timeoutSeconds` (default 60, max 600), and get their \
                results. `stop`: stop `target` (or `all`). `send`: send `message` to `target` and get its reply. \
                `target` is `#n` (as `list` numbers them, newest first) or a run id prefix."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["list", "wait", "stop", "send"]},
                    "target": {"type": "string", "maxLength": MAX_TARGET_CHARS},
                    "message": {"type": "string", "maxLength": MAX_MESSAGE_CHARS},
                    "timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": MAX_WAIT_SECS}
                },
                "required": ["action"]
            }),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, a: Value) -> Result<String, ToolError> {
        if ctx.is_subagent {
            return Err(ToolError::Model(
                "forbidden: sub-agents cannot manage sub-agents".into(),
            ));
        }
        let action = args::req_str(&a, "action", 16)?;
        let target = args::opt_str(&a, "target", MAX_TARGET_CHARS)?;
        let rt = ctx.rt;
        match action {
            "list" => {
                let rows = rt.store.subagents_of(ctx.session_key, MAX_CHILDREN).await?;
                let mut out = Vec::with_capacity(rows.len());
                for (i, r) in rows.iter().enumerate() {
                    out.push(normalized(i + 1, r, result_of(rt, r).await?));
                }
                Ok(json!({"subagents": out}).to_string())
            }
            "wait" => {
                let secs = args::opt_u64(&a, "timeoutSeconds", 1, MAX_WAIT_SECS, "seconds")?
                    .unwrap_or(DEFAULT_WAIT_SECS);
                wait(ctx, target, Duration::from_secs(secs)).await
            }
            "stop" => {
                let t = target.ok_or_else(|| {
                    ToolError::Model(
                        "`stop` needs a `target`: `#n`, a run id prefix or `all`".into(),
                    )
                })?;
                if t.eq_ignore_ascii_case("all") {
                    let n =
                        control::stop_children_of(rt, ctx.session_key, "stopped by its requester")
                            .await?;
                    return Ok(json!({"stopped": n}).to_string());
                }
                Ok(execute(rt, ctx.session_key, SubCommand::Stop(t.to_string())).await?)
            }
            "send" => {
                let t = target.ok_or_else(|| {
                    ToolError::Model("`send` needs a `target`: `#n` or a run id prefix".into())
                })?;
                let message = args::req_str(&a, "message", MAX_MESSAGE_CHARS)?;
                Ok(execute(
                    rt,
                    ctx.session_key,
                    SubCommand::Send {
                        target: t.to_string(),
                        message: message.to_string(),
                    },
                )
                .await?)
            }
            other => Err(ToolError::Model(format!(
                "unknown action {other:?}; use list, wait, stop or send"
            ))),
        }
    }
}

/// `wait`: until the targets are settled, the bound passes, or the run is stopped.
async fn wait(
    ctx: &ToolContext<'_>,
    target: Option<&str>,
    bound: Duration,
) -> Result<String, ToolError> {
    let rt: &Arc<Runtime> = ctx.rt;
    // Subscribe before looking, so no end between the look and the wait is missed.
    let mut events = rt.events.subscribe();
    let rows = rt.store.subagents_of(ctx.session_key, MAX_CHILDREN).await?;
    let ids: Vec<String> = match target {
        Some(t) if !t.eq_ignore_ascii_case("all") => vec![control::resolve(&rows, t)
            .map_err(|e| ToolError::Model(e.to_string()))?
            .run_id
            .clone()],
        // Every child still active, and every child this run spawned even if it has
        // already ended (a quick child must not drop out of "spawn, then wait").
        _ => rows
            .iter()
            .filter(|r| !settled(r) || r.requester_run_id.as_deref() == Some(ctx.run_id))
            .map(|r| r.run_id.clone())
            .collect(),
    };
    let deadline = tokio::time::Instant::now() + bound;
    let mut timed_out = false;
    loop {
        let rows = rt.store.subagents_of(ctx.session_key, MAX_CHILDREN).await?;
        let waited: Vec<(usize, &SubagentRow)> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| ids.contains(&r.run_id))
            .collect();
        if timed_out || waited.iter().all(|(_, r)| settled(r)) {
            let mut out = Vec::with_capacity(waited.len());
            for (i, r) in &waited {
                out.push(normalized(i + 1, r, result_of(rt, r).await?));
            }
            let pending: Vec<&str> = waited
                .iter()
                .filter(|(_, r)| !settled(r))
                .map(|(_, r)| r.run_id.as_str())
                .collect();
            return Ok(
                json!({"subagents": out, "timedOut": !pending.is_empty(), "stillRunning": pending})
                    .to_string(),
            );
        }
        timed_out = next_look(&mut events, deadline, ctx).await?;
    }
}

/// Wait until it is worth looking at the children again: an event that may settle one,
/// the recheck interval, or the `deadline` (then `true`). A stopped run is an error.
async fn next_look(
    events: &mut broadcast::Receiver<Arc<Event>>,
    deadline: tokio::time::Instant,
    ctx: &ToolContext<'_>,
) -> Result<bool, ToolError> {
    let recheck = tokio::time::sleep(RECHECK);
    tokio::pin!(recheck);
    loop {
        tokio::select! {
            ev = events.recv() => match ev {
                Ok(ev) if !may_settle(&ev) => {}
                // A settling event, or missed ones (lagged): look.
                _ => return Ok(false),
            },
            _ = &mut recheck => return Ok(false),
            _ = tokio::time::sleep_until(deadline) => return Ok(true),
            _ = ctx.cancel.cancelled() => {
                return Err(ToolError::Model("stopped while waiting for sub-agents".into()))
            }
        }
    }
}

/// Whether `event` may settle a child (its run ended, its announce committed, its session
/// archived): only these make `wait` look again before its next recheck.
fn may_settle(event: &Event) -> bool {
    matches!(
        event,
        Event::RunEnded(_) | Event::SubagentAnnounced { .. } | Event::SubagentArchived { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(outcome: Option<&str>, started: Option<i64>, announce: &str) -> SubagentRow {
        SubagentRow {
            run_id: "r1".into(),
            child_session_key: "agent:main:subagent:r1".into(),
            requester_session_key: "agent:main:main".into(),
            requester_run_id: None,
            requester_origin: None,
            task: "t".into(),
            label: None,
            agent_id: "main".into(),
            model: None,
            thinking: None,
            cleanup: crate::store::Cleanup::Keep,
            run_timeout_seconds: 0,
            task_call_id: None,
            created_at: 0,
            ended_at: None,
            outcome: outcome.map(|o| Outcome::parse(o).expect("an outcome")),
            error: None,
            stop_note: None,
            announce_state: AnnounceState::parse(announce).expect("an announce state"),
            announce_attempts: 0,
            archive_at: None,
            archived_at: None,
            status: crate::store::RunStatus::Running,
            started_at: started,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            session_id: "s".into(),
        }
    }

    /// Catches: `wait` returning before a child's announce settled (its result not final),
    /// or a child's state and status told wrongly.
    #[test]
    fn normalized_states_and_settling() {
        let queued = row(None, None, "pending");
        let running = row(None, Some(1), "pending");
        let ended = row(Some("timeout"), Some(1), "pending");
        let done = row(Some("success"), Some(1), "queued");
        assert!(!settled(&queued) && !settled(&running) && !settled(&ended) && settled(&done));
        assert_eq!(normalized(1, &queued, None)["state"], "queued");
        assert_eq!(normalized(1, &running, None)["state"], "running");
        let v = normalized(2, &ended, None);
        assert_eq!(
            (v["state"].as_str(), v["status"].as_str()),
            (Some("done"), Some("timeout"))
        );
        let v = normalized(3, &done, Some("95 moons".into()));
        assert_eq!(
            (
                v["index"].as_u64(),
                v["status"].as_str(),
                v["result"].as_str()
            ),
            (Some(3), Some("success"), Some("95 moons"))
        );
    }
}
