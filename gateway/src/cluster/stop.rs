//! Stops in shared mode: `/stop`, `/new`, `/subagents stop` and the API's stop reach the
//! process that runs the run (docs/postgres.md, "Shared mode: the bus").
//!
//! The process that takes the stop does what it does alone (cancels its own active run,
//! ends what waits on its lanes), then [`reach_others`]: it reads the session's runs that
//! are still `running` or `queued` in the store, and publishes a [`Stop`] naming them. Each
//! process [`apply`]s it: it cancels its active run of the session when the stop names it,
//! and remembers the named runs, so one it starts later — taken off its lane between the
//! stop and its activation, or still queued — is stopped the moment it becomes active
//! (`Runtime::set_active`), before it claims anything. The answer the user gets counts
//! those runs, read from the store, not only this process's.

use std::sync::Arc;

use super::wire::Stop;
use crate::runtime::{CancelReason, Runtime};
use crate::store::{RunStatus, StoreError};

/// A session's newest runs a stop looks at (a session runs one at a time; a few may wait).
const RECENT_RUNS: i64 = 16;

/// Shared mode, after this process stopped what it runs of `session_key` (`local`: the
/// run it cancelled, if any): stop the session's other live runs wherever they run.
/// Returns how many runs besides `local` were live (running or queued) in the store.
/// Without a bus (standby mode, SQLite) it does nothing and returns 0.
pub async fn reach_others(
    rt: &Arc<Runtime>,
    session_key: &str,
    local: Option<&str>,
) -> Result<usize, StoreError> {
    let Some(bus) = super::bus::of(rt) else {
        return Ok(0);
    };
    let runs: Vec<String> = rt
        .store
        .session_runs(session_key, RECENT_RUNS)
        .await?
        .into_iter()
        .filter(|r| matches!(r.status, RunStatus::Running | RunStatus::Queued))
        .map(|r| r.id)
        .collect();
    if runs.is_empty() {
        return Ok(0);
    }
    let stop = Stop {
        session_key: session_key.to_string(),
        runs,
    };
    // Here too: a run of this process between its lane and its activation.
    apply(rt, &stop);
    bus.send_stop(&rt.store, &stop).await?;
    Ok(stop
        .runs
        .iter()
        .filter(|id| Some(id.as_str()) != local)
        .count())
}

/// Apply a stop here: remember its runs, and cancel the session's active run when the stop
/// names it (and it was not cancelled already). Returns whether a run was cancelled.
pub fn apply(rt: &Runtime, stop: &Stop) -> bool {
    let Some(bus) = super::bus::of(rt) else {
        return false;
    };
    // Remember first, then look: a run activated meanwhile looks after it registers
    // (`Runtime::set_active`), so one of the two sees the other.
    bus.remember_stopped(&stop.runs);
    match rt.active_run(&stop.session_key) {
        Some(active) if stop.runs.contains(&active.run_id) && !active.cancel.is_cancelled() => {
            tracing::info!(run_id = %active.run_id, session = %stop.session_key, "run stopped by a stop published on the bus");
            active.cancel(CancelReason::User);
            true
        }
        _ => false,
    }
}
