//! The scheduler task: runs every due job (see `fire`), then sleeps until the soonest next
//! time, a change to the jobs (`Runtime::cron_wake`), or at most 15 s (a clock that
//! jumped, or a job added or run by `switchboard cron` beside the daemon, is noticed). Owned by the app's tracker; stops on its cancel token.
//! In shared mode it runs only in the process holding the `cron` lease (`run_or_hold`);
//! every process still adds, changes and syncs jobs in the table.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cluster::hold::{hold, CRON_LEASE};
use crate::runtime::Runtime;
use crate::store::now_ms;

use super::fire::fire_at;
use super::schedule::Schedule;

/// Longest sleep between two looks at the table.
pub const MAX_SLEEP: Duration = Duration::from_secs(15);
/// Wait after the store failed, before looking again.
const AFTER_ERROR: Duration = Duration::from_secs(5);

pub async fn run(rt: Arc<Runtime>, cancel: CancellationToken) {
    run_on(rt, cancel, now_ms).await;
}

/// The scheduler as the daemon runs it: at once in standby mode and on SQLite; in shared
/// mode only while this process holds the `cron` lease (another process takes it over
/// when this one dies or stops; a due time either fired is recorded once, `fire`).
pub async fn run_or_hold(rt: Arc<Runtime>, cancel: CancellationToken) {
    let Some(member) = rt.home.member.clone() else {
        return run(rt, cancel).await;
    };
    let store = rt.store.clone();
    hold(
        store,
        CRON_LEASE.to_owned(),
        member,
        cancel,
        move |_lease, token| run(rt.clone(), token),
    )
    .await;
}

/// The scheduler on the clock `now` (unix ms): the system clock in the daemon; the tests
/// run it on tokio's paused clock, so due times pass without waiting for them.
pub(crate) async fn run_on(rt: Arc<Runtime>, cancel: CancellationToken, now: impl Fn() -> i64) {
    loop {
        let wait = match tick(&rt, &now).await {
            Ok(wait) => wait,
            Err(e) => {
                tracing::error!(error = %e, "cron: cannot read the job table");
                AFTER_ERROR
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = rt.tasks.cron_wake.notified() => {}
            _ = cancel.cancelled() => return,
        }
    }
}

/// Fire what is due; how long to sleep until the next job is.
async fn tick(
    rt: &Arc<Runtime>,
    now: &impl Fn() -> i64,
) -> Result<Duration, crate::store::StoreError> {
    for job in rt.store.due_cron_jobs(now()).await? {
        if rt.tasks.shutdown.is_cancelled() {
            break;
        }
        if let Err(e) = fire_at(rt, &job, false, now()).await {
            // Never due again at once: a job that cannot run waits for its next time.
            tracing::error!(job = %job.id, error = %e, "cron: the job could not run");
            let next = Schedule::parse(&job.spec.schedule)
                .ok()
                .and_then(|s| s.next_after(now()));
            rt.store.skip_cron_job(&job.id, next).await?;
        }
    }
    let wait = match rt.store.next_cron_due().await? {
        Some(t) => Duration::from_millis(u64::try_from(t - now()).unwrap_or(0)),
        None => MAX_SLEEP,
    };
    Ok(wait.min(MAX_SLEEP))
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
