//! What follows a run's end (its announce, a run for what waits in its session), and the
//! end written for a run whose own code could not end it (a store error, a panic).

use std::sync::Arc;

use super::end::{archive_after, emit_ended};
use crate::agent::dispatch;
use crate::runtime::Runtime;
use crate::store::{RunEnd, RunFinished, RunRow, RunStatus, StoreError};

/// After a run: its announce, the session's waiting messages, or the record of a store
/// error that stopped it.
pub(super) async fn after(
    rt: &Arc<Runtime>,
    run_id: &str,
    ended: Result<Option<(RunRow, RunFinished)>, StoreError>,
) {
    match ended {
        Ok(Some((run, finished))) => next_steps(rt, &run, finished).await,
        Ok(None) => {}
        Err(e) => {
            tracing::error!(run_id, error = %e, "run failed on a store error");
            let notice = format!("⚠️ Internal error, the run was stopped: {e}");
            fail_run(rt, run_id, &e.to_string(), notice).await;
        }
    }
}

/// What follows a run's end: the run-end hooks (a sub-agent's announce), then a run for
/// the messages that wait in its session.
pub(super) async fn next_steps(rt: &Arc<Runtime>, run: &RunRow, finished: RunFinished) {
    rt.parts
        .get::<crate::agent::hooks::RunEndHooks>()
        .ended(rt, run, &finished)
        .await;
    if let Err(e) = dispatch::after_run(rt, &run.session_key, &run.agent_id, finished.waiting).await
    {
        tracing::error!(run_id = %run.id, error = %e, "cannot schedule waiting messages");
    }
}

/// After a run's task panicked (caught at its lane job, see `dispatch`): end the run
/// `failed`, as [`fail_run`] does.
pub async fn after_panic(rt: &Arc<Runtime>, run_id: &str, panic: &str) {
    tracing::error!(
        run_id,
        panic,
        "a run's task panicked; ending the run as failed"
    );
    let notice = "⚠️ Internal error: this run stopped unexpectedly and was ended. \
                  Please send your message again.";
    fail_run(
        rt,
        run_id,
        &format!("internal error: {panic}"),
        notice.into(),
    )
    .await;
}

/// End a run that its own code could not end (a store error, a panic): `failed` with
/// `notice` to its chat and a `run.ended` event for its waiters, then go on as after any
/// end. A run that had ended already is left as it is.
async fn fail_run(rt: &Arc<Runtime>, run_id: &str, error: &str, notice: String) {
    let run = match rt.store.get_run(run_id).await {
        Ok(Some(run)) if !run.status.is_terminal() => run,
        Ok(_) => return,
        Err(e) => {
            tracing::error!(run_id, error = %e, "cannot read the run to end it");
            return;
        }
    };
    let claimed = rt.store.claimed_by(&run).await.unwrap_or_default();
    let end = RunEnd {
        steps: run.steps,
        input_tokens: run.input_tokens,
        output_tokens: run.output_tokens,
        cost_usd: run.cost_usd,
        deliver: Some(notice),
        archive_after_ms: archive_after(rt, &run),
        ..RunEnd::bare(RunStatus::Failed, Some(error.to_string()))
    };
    match rt.store.finish_run(run_id, &end).await {
        Ok(finished) => {
            if finished.reply_queued {
                rt.tasks.outbox_wake.notify_one();
            }
            emit_ended(rt, &run, &end, &claimed);
            next_steps(rt, &run, finished).await;
        }
        // It ended in the meantime.
        Err(StoreError::NotFound(_)) => {}
        Err(e) => tracing::error!(run_id, error = %e, "cannot end the run"),
    }
}
