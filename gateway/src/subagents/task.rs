//! The blocking `task` tool (README, Sub-agents): create a child on the `subagent` lane
//! through the spawn machinery ([`super::spawn::create`]), wait for its run to end, and
//! give its answer as the tool result — `<task_result agent="…">answer</task_result>` or
//! `<task_error agent="…">why</task_error>`.
//!
//! A task child posts no announce to the chat and records no fan-in message: its answer is
//! the tool result. Its announce is completed as skipped when its run ends, so it is
//! archived like every child (`archiveAfterMinutes`). The child is recorded with the
//! requester's run id and the tool call id in the spawn's transaction: a requester run
//! resumed after a restart finds it again and waits for it rather than creating another.
//! When the requester's run stops waiting for any reason but shutdown (`/stop`, its run
//! timeout), the child is stopped.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::spawn_args::{self, Cleanup, SpawnArgs};
use super::{control, spawn};
use crate::agent::provider::ToolSpec;
use crate::agent::tools::{args, Tool, ToolContext, ToolError};
use crate::events::Event;
use crate::runtime::Runtime;
use crate::store::{Outcome, Role, Store, StoreError, SubagentRow, ToolCallRecord};

/// The tool's name.
pub const NAME: &str = "task";
/// How often the wait looks again when no event woke it.
const RECHECK: Duration = Duration::from_secs(1);
/// The Notes of a task child stopped because its requester stopped waiting.
const ABANDONED: &str =
    "stopped: the run that started this task ended before it (stopped or timed out)";

pub struct Task;

#[async_trait]
impl Tool for Task {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: NAME.into(),
            description: "Run a sub-agent to its end and get its answer as this tool's result \
                (<task_result agent=\"…\">answer</task_result>, or <task_error agent=\"…\">why</task_error>). \
                Several task calls in one answer run in parallel. `agentId` takes an agent id or alias (see agents_list)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string", "description": "A few words naming the task (its label)", "maxLength": spawn_args::MAX_LABEL_CHARS},
                    "prompt": {"type": "string", "description": "What the sub-agent should do", "maxLength": spawn_args::MAX_TASK_CHARS},
                    "agentId": {"type": "string"}
                },
                "required": ["description", "prompt"]
            }),
        }
    }

    fn concurrent(&self) -> bool {
        true
    }

    async fn resumable(
        &self,
        store: &Store,
        run_id: &str,
        open: &[ToolCallRecord],
    ) -> Result<Vec<ToolCallRecord>, StoreError> {
        resumable_calls(store, run_id, open).await
    }

    async fn call(&self, ctx: &ToolContext<'_>, a: Value) -> Result<String, ToolError> {
        if ctx.is_subagent {
            return Err(ToolError::Model(
                "forbidden: sub-agents cannot start tasks".into(),
            ));
        }
        let spawn_args = SpawnArgs {
            task: args::req_str(&a, "prompt", spawn_args::MAX_TASK_CHARS)?.to_string(),
            label: Some(args::req_str(&a, "description", spawn_args::MAX_LABEL_CHARS)?.to_string()),
            agent_id: args::opt_str(&a, "agentId", spawn_args::MAX_NAME_CHARS)?.map(str::to_string),
            model: None,
            thinking: None,
            isolation: None,
            run_timeout_seconds: None,
            cleanup: Cleanup::Keep,
        };
        // Subscribe before creating or looking, so no end is missed.
        let events = ctx.rt.events.subscribe();
        let run_id = match ctx.rt.store.task_child(ctx.run_id, ctx.call_id).await? {
            Some(row) => {
                tracing::info!(run_id = %row.run_id, "task: waiting again for the child of a resumed run");
                row.run_id
            }
            None => {
                spawn::create(ctx, &spawn_args, Some(ctx.call_id))
                    .await?
                    .run_id
            }
        };
        let guard = StopOnDrop {
            rt: ctx.rt.clone(),
            run_id: Some(run_id.clone()),
        };
        let row = wait_end(ctx.rt, &run_id, events).await?;
        guard.disarm();
        let answer = match row.outcome {
            Some(Outcome::Success) => last_answer(ctx.rt, &row).await?,
            _ => None,
        };
        Ok(render(&row, answer.as_deref()))
    }
}

/// Wait until the child `run_id` has ended (its outcome is recorded, in the transaction
/// that ends its run). Looks again when the child's session publishes a run end, when the
/// bus lagged, and every [`RECHECK`]. Cancellation comes from outside: the requester's run
/// drops this future.
async fn wait_end(
    rt: &Arc<Runtime>,
    run_id: &str,
    mut events: tokio::sync::broadcast::Receiver<Arc<Event>>,
) -> Result<SubagentRow, ToolError> {
    loop {
        let Some(row) = rt.store.subagent(run_id).await? else {
            return Err(ToolError::Fatal(format!("task child {run_id} vanished")));
        };
        if row.outcome.is_some() {
            return Ok(row);
        }
        let recheck = tokio::time::sleep(RECHECK);
        tokio::pin!(recheck);
        loop {
            tokio::select! {
                ev = events.recv() => match ev {
                    Ok(ev) => match ev.as_ref() {
                        Event::RunEnded(e) if e.session_key == row.child_session_key => break,
                        _ => {}
                    },
                    // Lagged: an end may have been skipped; closed: only the timer is left.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                        (&mut recheck).await;
                        break;
                    }
                },
                () = &mut recheck => break,
            }
        }
    }
}

/// The child's final answer: its last non-empty assistant text.
async fn last_answer(rt: &Runtime, row: &SubagentRow) -> Result<Option<String>, StoreError> {
    let rows = rt.store.transcript_tail(&row.session_id, 20).await?;
    Ok(rows
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.content.trim())
        .find(|c| !c.is_empty())
        .map(str::to_string))
}

/// The tool result for an ended child: its answer on success, else why it did not give one.
pub fn render(row: &SubagentRow, answer: Option<&str>) -> String {
    let agent = escape_attr(&row.agent_id);
    match (row.outcome, answer) {
        (Some(Outcome::Success), Some(text)) => {
            format!(
                "<task_result agent=\"{agent}\">{}</task_result>",
                neutralize(text)
            )
        }
        (outcome, _) => {
            let outcome = outcome.unwrap_or(Outcome::Cancelled);
            let why = match outcome {
                Outcome::Success => "the sub-agent ended without an answer".to_string(),
                Outcome::Cancelled => row
                    .stop_note
                    .clone()
                    .or_else(|| row.error.clone())
                    .unwrap_or_else(|| "the sub-agent was stopped".into()),
                other => {
                    let detail = row.error.as_deref().unwrap_or("no details");
                    format!("{}: {detail}", other.as_str())
                }
            };
            format!(
                "<task_error agent=\"{agent}\">{}</task_error>",
                neutralize(&why)
            )
        }
    }
}

/// A child's text cannot close the element it is quoted in (hostile output).
fn neutralize(text: &str) -> String {
    text.replace("</task_", "&lt;/task_")
}

fn escape_attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// Stops the child when the waiting future is dropped before the child ended, unless the
/// gateway is shutting down (then both are resumed at the next start).
struct StopOnDrop {
    rt: Arc<Runtime>,
    run_id: Option<String>,
}

impl StopOnDrop {
    fn disarm(mut self) {
        self.run_id = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let Some(run_id) = self.run_id.take() else {
            return;
        };
        if self.rt.tasks.shutdown.is_cancelled() {
            return;
        }
        let rt = self.rt.clone();
        self.rt.tasks.spawn(async move {
            let stopped = match rt.store.subagent(&run_id).await {
                Ok(Some(row)) if row.outcome.is_none() => {
                    control::stop_child(&rt, &row, ABANDONED).await
                }
                Ok(_) => Ok(false),
                Err(e) => Err(e),
            };
            if let Err(e) = stopped {
                tracing::error!(run_id, error = %e, "cannot stop an abandoned task child");
            }
        });
    }
}

/// The `task` calls among `open` (calls of the run's last model answer without a result)
/// whose child was created: a resumed run waits for those children again.
pub async fn resumable_calls(
    store: &Store,
    run_id: &str,
    open: &[ToolCallRecord],
) -> Result<Vec<ToolCallRecord>, StoreError> {
    let mut out = Vec::new();
    for call in open.iter().filter(|c| c.name == NAME) {
        if store.task_child(run_id, &call.id).await?.is_some() {
            out.push(call.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
