//! Two runtimes on one PostgreSQL database, each with its bus, as two processes in shared
//! mode: what one emits reaches the other's subscribers and waiters, and a stop taken by
//! one cancels the run the other runs, or will start.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use switchboard_testkit::pg::TestDb;
use tokio::sync::broadcast;

use super::*;
use crate::agent::run::Activation;
use crate::events::RunEnded;
use crate::runtime::run_ends::RunWait;
use crate::runtime::CancelReason;
use crate::store::{NewRun, RunEnd, RunStatus};

/// A bound on each wait, so a deaf bus fails the test instead of hanging it.
const WAIT: Duration = Duration::from_secs(60);
const KEY: &str = "agent:main:main";

struct Process {
    rt: Arc<Runtime>,
    cancel: CancellationToken,
    tasks: TaskTracker,
    _dir: tempfile::TempDir,
}

impl Process {
    async fn start(db: &TestDb, owner: &str) -> Process {
        let store = Store::open_postgres(db.url()).await.unwrap();
        let (dir, rt) = crate::runtime::testing::runtime_on("{}", store);
        let member = Member {
            owner: Arc::from(owner),
            lease_timeout: Duration::from_secs(15),
        };
        let (cancel, tasks) = (CancellationToken::new(), TaskTracker::new());
        start(&rt, &member, &tasks, cancel.clone()).await.unwrap();
        Process {
            rt,
            cancel,
            tasks,
            _dir: dir,
        }
    }

    async fn stop(self) {
        self.cancel.cancel();
        self.tasks.close();
        self.tasks.wait().await;
        self.rt.lanes.close();
        self.rt.tasks.shutdown.cancel();
    }
}

async fn next(rx: &mut broadcast::Receiver<Arc<Event>>) -> Event {
    (*tokio::time::timeout(WAIT, rx.recv())
        .await
        .unwrap()
        .unwrap())
    .clone()
}

/// A run of `KEY` in the store, `running` when `start`, else `queued`.
async fn run_row(rt: &Runtime, id: &str, start: bool) {
    let session = rt.store.ensure_session(KEY, "main", None).await.unwrap();
    let run = NewRun {
        id,
        session_key: KEY,
        session_id: &session.id,
        agent_id: "main",
        lane: crate::queue::MAIN,
        claim_all: true,
        origin: None,
        model: None,
        timeout_ms: None,
    };
    rt.store.create_run(&run).await.unwrap();
    if start {
        let started = rt.store.start_run(id, KEY, &session.id, None, None).await;
        assert!(started.unwrap().is_some());
    }
}

/// Catches: events that stay on the process that emitted them (a `/ws` client or a
/// `wait: true` caller on another process sees nothing), and a process that hears its
/// own events twice.
#[tokio::test]
async fn what_one_process_emits_reaches_the_subscribers_and_waiters_of_the_other() {
    let db = TestDb::create().await.unwrap();
    let a = Process::start(&db, "a:1:x").await;
    let b = Process::start(&db, "b:2:y").await;
    let mut a_bus = a.rt.events.subscribe();
    let mut b_bus = b.rt.events.subscribe();
    let mut waiter = b.rt.events.run_ends.subscribe(KEY);

    let started = Event::RunStarted {
        session_key: KEY.into(),
        run_id: "r1".into(),
    };
    let end = RunEnded {
        session_key: KEY.into(),
        run_id: Some("r1".into()),
        status: RunStatus::Succeeded,
        error: None,
        reply: Some("the answer".into()),
        claimed: vec![41, 42],
    };
    a.rt.emit(started.clone());
    a.rt.emit(Event::RunEnded(end.clone()));
    assert_eq!(next(&mut b_bus).await, started);
    assert_eq!(next(&mut b_bus).await, Event::RunEnded(end.clone()));
    assert_eq!(
        waiter.wait_for_claiming_run(42, WAIT).await,
        RunWait::Ended(Arc::new(end.clone()))
    );

    // A hears its own events once: from itself, not again from the bus (B's marker,
    // sent after B heard A's, comes next).
    let marker = Event::SubagentArchived {
        child_session_key: "agent:main:subagent:m".into(),
    };
    b.rt.emit(marker.clone());
    assert_eq!(next(&mut a_bus).await, started);
    assert_eq!(next(&mut a_bus).await, Event::RunEnded(end));
    assert_eq!(next(&mut a_bus).await, marker);
    a.stop().await;
    b.stop().await;
}

/// Catches: a long reply cut or lost on its way to a waiter on another process: it goes
/// by reference and is read from the run's row.
#[tokio::test]
async fn a_long_reply_reaches_a_waiter_on_the_other_process_whole() {
    let db = TestDb::create().await.unwrap();
    let a = Process::start(&db, "a:1:x").await;
    let b = Process::start(&db, "b:2:y").await;
    let reply = "long answer ".repeat(1_000);
    run_row(&a.rt, "r1", true).await;
    let done = RunEnd {
        reply: Some(reply.clone()),
        ..RunEnd::bare(RunStatus::Succeeded, None)
    };
    a.rt.store.finish_run("r1", &done).await.unwrap();
    let mut waiter = b.rt.events.run_ends.subscribe(KEY);
    a.rt.emit(Event::RunEnded(RunEnded {
        session_key: KEY.into(),
        run_id: Some("r1".into()),
        status: RunStatus::Succeeded,
        error: None,
        reply: Some(reply.clone()),
        claimed: vec![7],
    }));
    let RunWait::Ended(end) = waiter.wait_for_claiming_run(7, WAIT).await else {
        panic!("no end")
    };
    assert_eq!(end.reply.as_deref(), Some(reply.as_str()));
    a.stop().await;
    b.stop().await;
}

/// Catches: a stop that only looks at the process that took it (`/stop` through A answers
/// "Nothing to stop." while B's run goes on), and a stop lost because the run was between
/// its lane and its activation when the stop arrived.
#[tokio::test]
async fn a_stop_taken_by_one_process_stops_the_run_the_other_runs_or_starts() {
    let db = TestDb::create().await.unwrap();
    let a = Process::start(&db, "a:1:x").await;
    let b = Process::start(&db, "b:2:y").await;
    run_row(&b.rt, "r1", true).await;
    let running = Activation::new(&b.rt, KEY, "r1");
    let cancelled = b.rt.active_run(KEY).unwrap();
    // Queued in the store, not yet active anywhere (taken off a lane, not activated).
    run_row(&b.rt, "r2", false).await;

    let answer = crate::commands::session::stop(&a.rt, KEY).await.unwrap();
    assert_eq!(answer, "Stopped 2 runs.");
    tokio::time::timeout(WAIT, cancelled.cancel.cancelled())
        .await
        .unwrap();
    assert_eq!(cancelled.reason(), Some(CancelReason::User));
    drop(running);

    // The queued one is stopped the moment it becomes active on B.
    let later = Activation::new(&b.rt, KEY, "r2");
    let active = b.rt.active_run(KEY).unwrap();
    assert!(active.cancel.is_cancelled());
    assert_eq!(active.reason(), Some(CancelReason::User));
    drop(later);
    // A run the stop did not name is not stopped.
    let _third = Activation::new(&b.rt, KEY, "r3");
    assert!(!b.rt.active_run(KEY).unwrap().cancel.is_cancelled());
    a.stop().await;
    b.stop().await;
}

/// Catches: `/new` on one process leaving the session's run on another process running on
/// into the archived session.
#[tokio::test]
async fn new_on_one_process_stops_the_sessions_run_on_the_other() {
    let db = TestDb::create().await.unwrap();
    let a = Process::start(&db, "a:1:x").await;
    let b = Process::start(&db, "b:2:y").await;
    run_row(&b.rt, "r1", true).await;
    let _running = Activation::new(&b.rt, KEY, "r1");
    let cancelled = b.rt.active_run(KEY).unwrap();

    crate::commands::session::new_session(&a.rt, KEY)
        .await
        .unwrap();
    tokio::time::timeout(WAIT, cancelled.cancel.cancelled())
        .await
        .unwrap();
    assert_eq!(cancelled.reason(), Some(CancelReason::User));
    a.stop().await;
    b.stop().await;
}
