//! The announce step: when a child's run has ended, ask the child (in its own session) for
//! a short result, then post the normalized announce to the requester's chat through the
//! outbox, once. Runs as a job of the runtime's task tracker, bounded by its own permits;
//! a pending announce survives restarts (it is re-scheduled at start), and one is worked
//! on at most once at a time in the process.

use std::collections::{HashSet, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use parking_lot::Mutex;
use tokio::sync::OwnedSemaphorePermit;

use crate::agent::models;
use crate::agent::provider::{complete_with_retry, ModelRequest, RetryPolicy};
use crate::config;
use crate::events::Event;
use crate::runtime::Runtime;
use crate::store::{
    AnnounceMessage, AnnounceState, Cleanup, NewMessage, Outcome, Role, StoreError, SubagentRow,
};

use super::render::{self, Announce};

/// What the child is asked after a successful run.
pub const ANNOUNCE_PROMPT: &str = "Your task has ended. Reply with a short result for the requester \
(what you found or did, in a few sentences). If there is nothing worth reporting, reply exactly ANNOUNCE_SKIP.";
pub const SKIP: &str = "ANNOUNCE_SKIP";
/// Attempts at the announce step before the announce is marked failed.
const MAX_ATTEMPTS: i64 = 5;
/// Most characters of the run's error quoted in the announce prompt.
const PROMPT_ERROR_MAX: usize = 300;

/// What the child is asked after its run ended with `outcome` (its `error`, if any).
/// `None`: no announce step (a stopped or interrupted run announces with its Notes).
pub fn prompt_for(outcome: &str, error: Option<&str>) -> Option<String> {
    let ask = "Reply with a short result for the requester: what you got done before it ended, \
and what is left. If there is nothing worth reporting, reply exactly ANNOUNCE_SKIP.";
    let error: String = error
        .unwrap_or("no details")
        .replace('\n', " ")
        .chars()
        .take(PROMPT_ERROR_MAX)
        .collect();
    match outcome {
        "success" => Some(ANNOUNCE_PROMPT.to_string()),
        "error" => Some(format!(
            "Your task has ended with an error ({error}). {ask}"
        )),
        "timeout" => Some(format!(
            "Your task has ended: it ran out of time ({error}). {ask}"
        )),
        _ => None,
    }
}

/// The run-end hook of sub-agents (wired by `app`): a child's end closes its progress
/// line and queues its announce.
pub struct OnChildEnd;

#[async_trait::async_trait]
impl crate::agent::hooks::RunEndHook for OnChildEnd {
    async fn ended(
        &self,
        rt: &Arc<Runtime>,
        run: &crate::store::RunRow,
        finished: &crate::store::RunFinished,
    ) {
        if finished.announce {
            super::progress::child_ended(rt, &run.session_key).await;
            schedule(rt, &run.id);
        }
    }
}

/// Announce steps running at once.
const ANNOUNCE_CONCURRENCY: usize = 16;

/// Bounds concurrent announce steps (each may call the model).
struct Permits(Arc<tokio::sync::Semaphore>);

impl Default for Permits {
    fn default() -> Permits {
        Permits(Arc::new(tokio::sync::Semaphore::new(ANNOUNCE_CONCURRENCY)))
    }
}

/// Announces waiting for a permit, in the order they were scheduled: a claimed run id
/// each, not a task. A burst of children ends faster than their announces run; a task per
/// waiting announce would hold its whole (model-calling) future's memory while it waits.
#[derive(Default)]
struct Waiting(Mutex<VecDeque<Claimed>>);

/// Announces being worked on in this process, by run id. A child whose run ends while the
/// start-up recovery runs is scheduled both by its run's end and by the recovery of
/// pending announces: only the first gets to call the model.
#[derive(Default)]
pub struct InFlight(Arc<Mutex<HashSet<String>>>);

impl InFlight {
    /// Take `run_id`, unless it is taken; it is given back when the claim is dropped.
    fn claim(&self, run_id: &str) -> Option<Claimed> {
        self.0.lock().insert(run_id.to_string()).then(|| Claimed {
            set: self.0.clone(),
            run_id: run_id.to_string(),
        })
    }
}

struct Claimed {
    set: Arc<Mutex<HashSet<String>>>,
    run_id: String,
}

impl Drop for Claimed {
    fn drop(&mut self) {
        self.set.lock().remove(&self.run_id);
    }
}

/// Why an announce did not complete.
#[derive(Debug, thiserror::Error)]
enum AnnounceError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Not a failure: the announce stays pending and runs at the next start.
    #[error("the gateway is shutting down")]
    Shutdown,
}

/// Queue the announce of `run_id` (nothing if it is queued or running already). Announce
/// steps do not take `subagent` lane slots (a lane full of long-running children must not
/// hold finished ones' announces back); they are bounded by their own permits instead
/// (those waiting for one are queued as run ids), and owned by the runtime's task tracker.
pub fn schedule(rt: &Arc<Runtime>, run_id: &str) {
    let Some(claimed) = rt.parts.get::<InFlight>().claim(run_id) else {
        tracing::debug!(run_id, "announce already scheduled");
        return;
    };
    rt.parts.get::<Waiting>().0.lock().push_back(claimed);
    start_waiting(rt);
}

/// Start waiting announces while permits are free; each one's task starts the next when it
/// ends. (At shutdown the waiting ones stay pending in the store, for the next start.)
fn start_waiting(rt: &Arc<Runtime>) {
    let (permits, waiting) = (rt.parts.get::<Permits>(), rt.parts.get::<Waiting>());
    while let Ok(permit) = permits.0.clone().try_acquire_owned() {
        let Some(claimed) = waiting.0.lock().pop_front() else {
            return;
        };
        let rt2 = rt.clone();
        rt.tasks.spawn(async move {
            job(&rt2, &claimed.run_id, permit).await;
            drop(claimed);
            start_waiting(&rt2);
        });
    }
}

/// At start: schedule every announce that was pending when the process stopped.
pub async fn recover(rt: &Arc<Runtime>) -> Result<usize, StoreError> {
    let pending = rt.store.pending_announces().await?;
    for row in &pending {
        tracing::info!(run_id = %row.run_id, "recovering a pending announce");
        schedule(rt, &row.run_id);
    }
    Ok(pending.len())
}

/// Announce, retrying with backoff after a failure (a store error, a panic) until it
/// completes, fails for good, or the gateway shuts down (then it is still pending). In
/// shared mode, only under the announce's lease (`announce:<run id>`): an announce that
/// another live process works on is left to it, and one whose process died is taken over.
async fn job(rt: &Arc<Runtime>, run_id: &str, permit: OwnedSemaphorePermit) {
    let Some(lease) = take_lease(rt, run_id).await else {
        return;
    };
    attempts(rt, run_id, permit).await;
    if let Some((name, owner)) = lease {
        // Done (completed or failed for good) or cut by shutdown (then it is pending, and
        // the process's release expires nothing here: the lease is gone, anyone may take it).
        if let Err(e) = rt.store.drop_lease(&name, &owner).await {
            tracing::warn!(run_id, error = %e, "cannot drop the announce's lease; it expires");
        }
    }
}

/// Shared mode: take the announce's lease (`Some(Some(lease))`), or `None` when another
/// process holds it. `Some(None)` where one process acts (no lease needed).
async fn take_lease(rt: &Arc<Runtime>, run_id: &str) -> Option<Option<(String, String)>> {
    let Some(member) = &rt.home.member else {
        return Some(None);
    };
    let name = format!("announce:{run_id}");
    match rt
        .store
        .acquire_lease(&name, &member.owner, member.lease_timeout)
        .await
    {
        Ok(Some(_)) => Some(Some((name, member.owner.to_string()))),
        Ok(None) => {
            tracing::debug!(run_id, "another process announces this child");
            None
        }
        Err(e) => {
            // Left pending: the next takeover pass (any process's) tries again.
            tracing::warn!(run_id, error = %e, "cannot take the announce's lease");
            None
        }
    }
}

/// The attempts of [`job`]: the first with the permit it was started with, each retry
/// with one taken again after its backoff.
async fn attempts(rt: &Arc<Runtime>, run_id: &str, first: OwnedSemaphorePermit) {
    let permits = rt.parts.get::<Permits>();
    let mut first = Some(first);
    loop {
        let permit = match first.take() {
            Some(p) => p,
            None => tokio::select! {
                p = permits.0.clone().acquire_owned() => match p {
                    Ok(p) => p,
                    Err(_) => return,
                },
                _ = rt.tasks.shutdown.cancelled() => return,
            },
        };
        let result = AssertUnwindSafe(announce(rt, run_id)).catch_unwind().await;
        drop(permit);
        let error = match result {
            Ok(Ok(())) => return,
            Ok(Err(AnnounceError::Shutdown)) => {
                tracing::info!(
                    run_id,
                    "announce cut short by shutdown; it runs at the next start"
                );
                return;
            }
            Ok(Err(AnnounceError::Store(e))) => e.to_string(),
            Err(_) => "the announce step panicked".to_string(),
        };
        tracing::error!(run_id, error, "announce failed");
        match rt.store.bump_announce_attempts(run_id).await {
            Ok(n) if n >= MAX_ATTEMPTS => {
                let _ = rt.store.fail_announce(run_id).await;
                return;
            }
            Ok(n) => {
                tokio::select! {
                    _ = tokio::time::sleep(crate::outbox::BACKOFF.delay(u32::try_from(n).unwrap_or(u32::MAX))) => {}
                    // Still pending in the store: scheduled again at the next start.
                    _ = rt.tasks.shutdown.cancelled() => return,
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot record the failed announce");
                return;
            }
        }
    }
}

async fn announce(rt: &Arc<Runtime>, run_id: &str) -> Result<(), AnnounceError> {
    let Some(row) = rt.store.subagent(run_id).await? else {
        return Ok(());
    };
    if row.announce_state != AnnounceState::Pending {
        return Ok(());
    }
    if row.task_call_id.is_some() {
        // A `task` child's answer is its requester's tool result: no announce step, no
        // chat message, no fan-in; completed as skipped (and archived like any child).
        if rt
            .store
            .complete_announce(run_id, None, row.cleanup == Cleanup::Delete, None)
            .await?
        {
            let answer = last_reply(rt, &row).await?;
            stop_hooks(rt, &row, answer.as_deref());
        }
        rt.tasks.timers_wake.notify_one();
        return Ok(());
    }
    let outcome = row.outcome.unwrap_or(Outcome::Cancelled).as_str();
    // The announce step's answer is stored with the announce, in one transaction.
    let (result, step_answer) = match prompt_for(outcome, row.error.as_deref()) {
        Some(prompt) => match announce_step(rt, &row, &prompt).await? {
            Step::Answered(text) => {
                let m = NewMessage::assistant(text.clone(), vec![]);
                (Some(text), Some(m))
            }
            Step::Fallback(text) => (text, None),
        },
        None => (last_reply(rt, &row).await?, None),
    };
    let step_answer = step_answer.as_ref().map(|m| (row.session_id.as_str(), m));
    // A worktree is finished (removed or kept) before the announce that names it.
    let worktree_note = super::worktree::finish(rt, run_id).await?;
    if result.as_deref().map(str::trim) == Some(SKIP) {
        let skipped = render::render(&announce_of(
            &row,
            outcome,
            Some(super::fan_in::SKIPPED_RESULT.into()),
        ));
        let fan_in = super::fan_in::message(
            run_id,
            row.label.as_deref(),
            &row.agent_id,
            &skipped.to_string(),
        );
        if rt
            .store
            .complete_announce_fan_in(
                run_id,
                None,
                row.cleanup == Cleanup::Delete,
                step_answer,
                Some(&fan_in),
            )
            .await?
        {
            stop_hooks(rt, &row, None);
        }
        rt.tasks.timers_wake.notify_one();
        tracing::info!(run_id, "announce skipped (ANNOUNCE_SKIP)");
        return Ok(());
    }
    let mut announced = announce_of(&row, outcome, result.clone());
    announced.notes = match (announced.notes, worktree_note) {
        (Some(n), Some(w)) => Some(format!("{n}; {w}")),
        (n, w) => n.or(w),
    };
    let rendered = render::render(&announced);
    let message = AnnounceMessage {
        text: &rendered.text,
        footer: &rendered.footer,
    };
    let fan_in = super::fan_in::message(
        run_id,
        row.label.as_deref(),
        &row.agent_id,
        &rendered.to_string(),
    );
    if rt
        .store
        .complete_announce_fan_in(
            run_id,
            Some(message),
            row.cleanup == Cleanup::Delete,
            step_answer,
            Some(&fan_in),
        )
        .await?
    {
        rt.tasks.outbox_wake.notify_one();
        rt.tasks.timers_wake.notify_one();
        stop_hooks(rt, &row, result.as_deref());
        rt.emit(Event::SubagentAnnounced {
            child_session_key: row.child_session_key.clone(),
            run_id: run_id.to_string(),
        });
    }
    Ok(())
}

/// Start `hooks.SubagentStop` for the child of `row` (owned tasks; the announce does not
/// wait for them). Called once per child: where its announce completed.
fn stop_hooks(rt: &Arc<Runtime>, row: &SubagentRow, result: Option<&str>) {
    let outcome = row.outcome.unwrap_or(Outcome::Cancelled).as_str();
    let cfg = rt.config();
    let agent = config::agent_entry(&cfg, &row.agent_id);
    let workspace = config::workspace_for(&cfg, agent.as_ref(), &rt.home.state_dir);
    super::hooks::spawn_stop(
        rt,
        workspace,
        super::hooks::stop_payload(row, outcome, result),
    );
}

fn announce_of(row: &SubagentRow, outcome: &str, result: Option<String>) -> Announce {
    let notes = match outcome {
        "cancelled" => Some(
            row.stop_note
                .clone()
                .unwrap_or_else(|| "the run was stopped".into()),
        ),
        "interrupted" => Some(
            "the run was interrupted by a gateway restart (subagents.onRestart = interrupt)".into(),
        ),
        _ => row.error.clone(),
    };
    let start = row.started_at.unwrap_or(row.created_at);
    let end = row.ended_at.unwrap_or(start);
    Announce {
        status: render::status_of(outcome),
        result,
        notes,
        runtime: Duration::from_millis((end - start).max(0) as u64),
        input_tokens: row.input_tokens.max(0) as u64,
        output_tokens: row.output_tokens.max(0) as u64,
        cost_usd: row.cost_usd,
        session_key: row.child_session_key.clone(),
        session_id: row.session_id.clone(),
        transcript: format!(
            "/api/sessions/{}/transcript?sessionId={}",
            row.child_session_key, row.session_id
        ),
    }
}

/// The child's last assistant text, if any (used when the run did not succeed, and as the
/// fallback when the announce step's model call fails).
async fn last_reply(rt: &Runtime, row: &SubagentRow) -> Result<Option<String>, StoreError> {
    let rows = rt.store.transcript_tail(&row.session_id, 20).await?;
    Ok(rows
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.content.trim().is_empty())
        .map(|m| m.content.clone()))
}

/// What the announce step produced.
enum Step {
    /// The child's answer to the announce prompt (not stored yet).
    Answered(String),
    /// No answer (no model, or the call failed): the child's last reply instead.
    Fallback(Option<String>),
}

/// Ask the child for its result, in its own session (the prompt is stored once, the
/// answer with the announce).
async fn announce_step(
    rt: &Arc<Runtime>,
    row: &SubagentRow,
    prompt: &str,
) -> Result<Step, AnnounceError> {
    let cfg = rt.config();
    let agent = config::agent_entry(&cfg, &row.agent_id);
    let explicit = row.model.as_deref();
    let pick = models::Pick {
        run: explicit,
        agent: agent.as_ref(),
        ..models::Pick::default()
    };
    let model = match models::resolve_for(&cfg, &pick, &rt.http, &rt.http.keys) {
        Ok(m) => m,
        Err(_) => return Ok(Step::Fallback(last_reply(rt, row).await?)),
    };
    if rt.tasks.shutdown.is_cancelled() {
        return Err(AnnounceError::Shutdown);
    }
    rt.store
        .ask_for_announce(&row.run_id, &row.session_id, prompt)
        .await?;
    let rows = rt.store.transcript(&row.session_id).await?;
    let system = "You are a sub-agent reporting back to the agent that started you.";
    // Fitted to the model's window like any of the child's requests (docs/context.md).
    let summary = rt.store.latest_compaction(&row.session_id).await?;
    let window = crate::agent::context::Window::new(
        &cfg,
        &model.reference,
        model.max_tokens,
        system,
        &[],
        summary,
    );
    let req = ModelRequest {
        model: model.model_id.clone(),
        system: system.into(),
        messages: window.fit(&rows).messages,
        tools: Default::default(),
        max_tokens: model.max_tokens,
        // A summary of what the child found: no thinking asked for.
        thinking: None,
        reasoning: Vec::new(),
        reasoning_model: model.reasoning_model,
    };
    let step_timeout = Duration::from_secs(cfg.agents.defaults.step_timeout_seconds.clamp(1, 1800));
    let call = complete_with_retry(
        model.provider.as_ref(),
        &req,
        RetryPolicy::new(model.max_retries, step_timeout),
        |_, e, _| {
            tracing::warn!(run_id = %row.run_id, error = %e, "announce step: model call failed; retrying");
        },
    );
    let resp = tokio::select! {
        r = call => r,
        _ = rt.tasks.shutdown.cancelled() => return Err(AnnounceError::Shutdown),
    };
    match resp {
        Ok(resp) => Ok(Step::Answered(resp.text)),
        Err(e) => {
            tracing::warn!(run_id = %row.run_id, error = %e, "announce step failed; announcing the child's last reply");
            Ok(Step::Fallback(last_reply(rt, row).await?))
        }
    }
}

#[cfg(test)]
#[path = "announce_tests.rs"]
mod tests;
