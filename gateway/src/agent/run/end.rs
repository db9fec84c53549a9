//! Ending a run: its status, usage and cost, its answer and reply (one transaction), and
//! the `run.ended` event its waiters wait for; a run stopped before it started.

use std::sync::Arc;

use super::outcome::{outcome, Failure};
use super::{Activation, Progress};
use crate::agent::models::{self, ResolvedModel};
use crate::events::{Event, RunEnded};
use crate::runtime::{CancelReason, Runtime};
use crate::store::{NewMessage, RunEnd, RunFinished, RunRow, RunStatus, StoreError};

pub(super) async fn finish(
    rt: &Runtime,
    run: &RunRow,
    status: RunStatus,
    error: Option<String>,
    progress: &Progress,
    model: Option<&ResolvedModel>,
    deliver: Option<String>,
) -> Result<RunFinished, StoreError> {
    let end = RunEnd {
        error,
        deliver,
        ..progress_end(status, progress, model)
    };
    end_run(rt, run, end, progress, None).await
}

/// End the run by `failure`: its status and error, and its notice sent to its chat.
pub(super) async fn finish_failed(
    rt: &Runtime,
    run: &RunRow,
    progress: &Progress,
    model: Option<&ResolvedModel>,
    failure: Failure,
) -> Result<RunFinished, StoreError> {
    let o = outcome(&failure);
    finish(rt, run, o.status, Some(o.error), progress, model, o.notice).await
}

pub(super) async fn finish_with_reply(
    rt: &Runtime,
    run: &RunRow,
    session_id: &str,
    progress: &Progress,
    model: &ResolvedModel,
    reply: String,
    deliver: Option<String>,
) -> Result<RunFinished, StoreError> {
    let last = NewMessage::assistant(reply.clone(), Vec::new());
    let end = RunEnd {
        reply: Some(reply),
        deliver,
        ..progress_end(RunStatus::Succeeded, progress, Some(model))
    };
    end_run(rt, run, end, progress, Some((session_id, &last))).await
}

/// A run's end with the steps, usage and cost it got to (no error, reply or delivery yet).
/// The model recorded is the one that served the last call (a fallback during an outage)
/// and the cost is what each call cost at its serving model's price; a run that made no
/// call here and recorded no cost is priced at its own model's.
fn progress_end(status: RunStatus, progress: &Progress, model: Option<&ResolvedModel>) -> RunEnd {
    let (input, output) = (progress.usage.input_tokens, progress.usage.output_tokens);
    let cost_usd = if progress.served_by.is_some() || progress.cost_usd.is_some() {
        progress.cost_usd
    } else {
        models::estimate_cost(model.and_then(|m| m.cost), input, output)
    };
    RunEnd {
        model: progress
            .served_by
            .clone()
            .or_else(|| model.map(|m| m.reference.clone())),
        steps: progress.steps as i64,
        input_tokens: input as i64,
        output_tokens: output as i64,
        cost_usd,
        context_tokens: progress.context_tokens,
        ..RunEnd::bare(status, None)
    }
}

/// End the run; `last`, its final answer (and the session it belongs to), is stored in the
/// same transaction. (The store sends the reply to the chat of the newest message the run
/// claimed, and keeps an HTTP API caller's out of the outbox: it reads the run.)
async fn end_run(
    rt: &Runtime,
    run: &RunRow,
    mut end: RunEnd,
    progress: &Progress,
    last: Option<(&str, &NewMessage)>,
) -> Result<RunFinished, StoreError> {
    if run.lane == crate::queue::SUBAGENT {
        end.archive_after_ms = rt.config().agents.defaults.subagents.archive_after_ms();
    }
    let finished = rt.store.finish_run_with(&run.id, &end, last).await?;
    // (An HTTP API caller's reply is not queued: nothing to wake the outbox worker for.)
    if finished.reply_queued {
        rt.tasks.outbox_wake.notify_one();
    }
    tracing::info!(run_id = %run.id, session = %run.session_key, status = end.status.as_str(), steps = end.steps, "run ended");
    emit_ended(rt, run, &end, &progress.claimed);
    Ok(finished)
}

/// The `run.ended` event of `run`, to its session's waiters and the event bus.
pub(super) fn emit_ended(rt: &Runtime, run: &RunRow, end: &RunEnd, claimed: &[i64]) {
    rt.emit(Event::RunEnded(RunEnded {
        session_key: run.session_key.clone(),
        run_id: Some(run.id.clone()),
        status: end.status,
        error: end.error.clone(),
        reply: end.reply.clone(),
        claimed: claimed.to_vec(),
    }));
}

/// A run whose cancel token fired after its lane started it and before it claimed
/// anything: at shutdown it stays as it is (it runs at the next start); stopped, it ends
/// `cancelled` without a model call.
pub(super) async fn stopped_before_start(
    rt: &Arc<Runtime>,
    run: RunRow,
    active: &Activation,
) -> Result<Option<(RunRow, RunFinished)>, StoreError> {
    if matches!(active.active.reason(), Some(CancelReason::Shutdown) | None) {
        return Ok(None);
    }
    tracing::info!(run_id = %run.id, "run stopped before it started");
    let stopped = outcome(&Failure::Stopped);
    let end = RunEnd {
        steps: run.steps,
        input_tokens: run.input_tokens,
        output_tokens: run.output_tokens,
        cost_usd: run.cost_usd,
        archive_after_ms: archive_after(rt, &run),
        ..RunEnd::bare(stopped.status, Some(stopped.error))
    };
    let mut finished = rt.store.finish_run(&run.id, &end).await?;
    finished.waiting = stopped_waiting();
    emit_ended(rt, &run, &end, &[]);
    Ok(Some((run, finished)))
}

/// The waiting messages a stopped run leaves to a run queued after it: none. The stop
/// drops them (`/stop`, `/new`, stopping a child), or they have a queued run of their own
/// (`interrupt` mode); a run queued for them here would race the drop.
pub(super) fn stopped_waiting() -> i64 {
    0
}

/// For a sub-agent's run, `archiveAfterMinutes` in force.
pub(super) fn archive_after(rt: &Runtime, run: &RunRow) -> Option<i64> {
    (run.lane == crate::queue::SUBAGENT)
        .then(|| rt.config().agents.defaults.subagents.archive_after_ms())
        .flatten()
}
