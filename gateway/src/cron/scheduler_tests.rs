//! The scheduler's sleep → fire path on tokio's paused clock: the scheduler runs on a clock
//! made of that paused time, so a job's due times pass in an instant and each firing
//! happens exactly at its due time (the paused clock only moves to the next timer: the
//! scheduler's own sleep). What a firing did is read back from the job table.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::run_on;
use crate::config::{Config, CronJobConfig};
use crate::runtime::{EnvKeys, Runtime};
use crate::store::{CronJobRow, JobSource, Store};

/// Unix ms at which the paused clock starts (any fixed instant).
const START: i64 = 1_800_000_000_000;

/// A clock on tokio's (paused) time, starting at [`START`].
fn paused_clock() -> impl Fn() -> i64 + Send + Sync + Clone + 'static {
    let origin = tokio::time::Instant::now();
    move || START + origin.elapsed().as_millis() as i64
}

fn every(id: &str, every: &str) -> CronJobConfig {
    serde_json::from_value(json!({
        "id": id,
        "schedule": {"every": every},
        "message": "tick",
    }))
    .unwrap()
}

async fn runtime(dir: &std::path::Path) -> Arc<Runtime> {
    let store = Store::open_in_memory().await.unwrap();
    let (_tx, rx) = tokio::sync::watch::channel(Arc::new(Config::default()));
    Runtime::new(
        store,
        rx,
        EnvKeys::default(),
        crate::runtime::Home::new(dir.to_path_buf(), None),
        CancellationToken::new(),
        Default::default(),
    )
}

/// The job once it came due `n` times, run or skipped (read from the table, with no timer
/// of its own: waiting on the store lets the paused clock move on to the scheduler's next
/// wake-up). A firing can be skipped when the clock jumped past the next due time while
/// the previous turn was still being stored (paused time does not wait for SQLite's
/// thread), so both count. Bounded by a count of reads, not by time.
async fn after_due(rt: &Runtime, id: &str, n: i64) -> CronJobRow {
    for _ in 0..100_000 {
        let job = rt.store.cron_job(id).await.unwrap().unwrap();
        if job.runs + job.skipped >= n {
            return job;
        }
        tokio::task::yield_now().await;
    }
    panic!("job {id} never came due {n} times");
}

/// An `every` job fires at each due time, not before and not late: after each firing its
/// next time is exactly one interval after the due time it fired at. Catches: a scheduler
/// that sleeps past a due time (the 15 s cap, a wake-up lost), fires early, or computes
/// the next time from the previous due time instead of from when it ran.
#[tokio::test(start_paused = true)]
async fn an_every_job_fires_at_each_due_time() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path()).await;
    let now = paused_clock();
    let job = every("tick", "20s");
    assert!(rt
        .store
        .insert_cron_job(&job, JobSource::Cli, Some(now() + 20_000))
        .await
        .unwrap());
    let cancel = CancellationToken::new();
    let scheduler = tokio::spawn(run_on(rt.clone(), cancel.clone(), now.clone()));

    for n in 1..=3 {
        let row = after_due(&rt, "tick", n).await;
        assert_eq!(
            (row.runs + row.skipped, row.next_run_at),
            (n, Some(START + 20_000 * (n + 1))),
            "after coming due {n} times"
        );
        assert!(row.runs >= 1, "the first firing runs");
    }
    cancel.cancel();
    scheduler.await.unwrap();
}

/// A job overdue by an hour (the daemon was down) runs once, then waits a whole interval
/// from now: it never catches up tick by tick. Catches: one run per missed tick after a
/// downtime.
#[tokio::test(start_paused = true)]
async fn an_overdue_job_runs_once_then_waits_a_whole_interval() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path()).await;
    let now = paused_clock();
    let job = every("late", "30s");
    rt.store
        .insert_cron_job(&job, JobSource::Cli, Some(START - 3_600_000))
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let scheduler = tokio::spawn(run_on(rt.clone(), cancel.clone(), now.clone()));

    let first = after_due(&rt, "late", 1).await;
    assert_eq!((first.runs, first.next_run_at), (1, Some(START + 30_000)));
    let second = after_due(&rt, "late", 2).await;
    assert_eq!(
        (second.runs + second.skipped, second.next_run_at),
        (2, Some(START + 60_000))
    );
    cancel.cancel();
    scheduler.await.unwrap();
}

/// A job the `cron` tool made with a schedule tighter than `cron.minInterval` (as one
/// stored before the bound, or a cron expression the check at `add` missed) still fires
/// at most every `cron.minInterval` (5 minutes by default). Catches: a run's job firing
/// every few seconds in the gateway.
#[tokio::test(start_paused = true)]
async fn a_tool_job_fires_at_most_every_min_interval() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path()).await;
    let now = paused_clock();
    let job = every("eager", "20s");
    assert!(rt
        .store
        .insert_cron_job(&job, JobSource::Tool, Some(now() + 20_000))
        .await
        .unwrap());
    let cancel = CancellationToken::new();
    let scheduler = tokio::spawn(run_on(rt.clone(), cancel.clone(), now.clone()));
    let first = after_due(&rt, "eager", 1).await;
    assert_eq!(first.next_run_at, Some(START + 20_000 + 300_000));
    cancel.cancel();
    scheduler.await.unwrap();
}
