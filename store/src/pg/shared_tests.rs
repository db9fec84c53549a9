//! Shared mode on PostgreSQL: what the triggers of migration 0006 lease, the start that
//! waits for another process's run of its session, the takeover of a dead process's runs
//! and outbox rows, and a timer fired by two processes at once.

use std::time::Duration;

use switchboard_channels::{ChatKind, Origin};
use switchboard_testkit::pg::TestDb;

use crate::{Claim, NewInbound, NewRun, RowLeases, RunEnd, RunStatus, Store, StoreError};

const LIVE: Duration = Duration::from_secs(600);

async fn member(db: &TestDb, owner: &str, ttl: Duration) -> Store {
    let m = RowLeases {
        owner: owner.to_owned(),
        ttl,
    };
    let store = Store::open_postgres_shared(db.url(), m).await.unwrap();
    store.set_shared_mode(true).await.unwrap();
    store
}

fn origin() -> Origin {
    Origin::webchat("chat-1", ChatKind::Direct)
}

fn inbound<'a>(key: &'a str, o: &'a Origin) -> NewInbound<'a> {
    NewInbound {
        session_key: key,
        origin: o,
        sender_id: "ann",
        text: "hello",
        message_id: None,
    }
}

fn new_run<'a>(id: &'a str, key: &'a str, sid: &'a str, o: &'a Origin) -> NewRun<'a> {
    NewRun {
        id,
        session_key: key,
        session_id: sid,
        agent_id: "main",
        lane: "main",
        claim_all: true,
        origin: Some(o),
        model: None,
        timeout_ms: None,
    }
}

/// A message for `key` accepted by `store` with its run `id` queued.
async fn queue(store: &Store, id: &str, key: &str, sid: &str, o: &Origin) {
    store
        .accept_message(&inbound(key, o), Some(&new_run(id, key, sid, o)))
        .await
        .unwrap()
        .unwrap();
}

/// Start run `id` of `key` on `store`, claiming `claim`.
async fn start(store: &Store, id: &str, key: &str, sid: &str, claim: Claim) {
    store
        .start_run(id, key, sid, None, Some(claim))
        .await
        .unwrap()
        .unwrap();
}

/// (lease_owner, has an expiry) of run `id`.
async fn run_lease(store: &Store, id: &str) -> (String, i64) {
    let owner = store
        .count_for_tests(&format!(
            "SELECT count(*) FROM runs WHERE id = '{id}' AND lease_owner IS NULL"
        ))
        .await
        .unwrap();
    if owner == 1 {
        return ("".into(), 0);
    }
    for who in ["a", "b"] {
        let n = store
            .count_for_tests(&format!(
                "SELECT count(*) FROM runs WHERE id = '{id}' AND lease_owner = '{who}'
                   AND lease_expires_at > switchboard_now_ms()"
            ))
            .await
            .unwrap();
        if n == 1 {
            return (who.into(), 1);
        }
    }
    ("expired".into(), 0)
}

/// A run queued or started by a shared-mode process is leased to it; its end clears the
/// lease; a standby-mode connection leases nothing. Catches: a path that writes a run
/// without its lease (another process would take it over while it runs).
#[tokio::test]
async fn runs_are_leased_to_the_process_that_queues_or_starts_them() {
    let db = TestDb::create().await.unwrap();
    let a = member(&db, "a", LIVE).await;
    let plain = Store::open_postgres(db.url()).await.unwrap();
    let o = origin();
    let key = "agent:main:webchat:direct:chat-1";
    let sid = a.ensure_session(key, "main", Some(&o)).await.unwrap().id;
    queue(&a, "r1", key, &sid, &o).await;
    assert_eq!(run_lease(&a, "r1").await, ("a".into(), 1), "queued");
    start(&a, "r1", key, &sid, Claim::All).await;
    assert_eq!(run_lease(&a, "r1").await, ("a".into(), 1), "running");
    a.finish_run("r1", &RunEnd::bare(RunStatus::Succeeded, None))
        .await
        .unwrap();
    assert_eq!(run_lease(&a, "r1").await, ("".into(), 0), "ended");

    plain
        .create_run(&new_run("r2", key, &sid, &o))
        .await
        .unwrap();
    assert_eq!(run_lease(&a, "r2").await, ("".into(), 0), "standby mode");
}

/// The session the two-run tests use.
const SESSION: &str = "agent:main:webchat:direct:chat-1";

/// [`SESSION`] on `a` with two queued runs, `r1` started (by `a`) and `r2` waiting: its id.
async fn r1_running_r2_queued(a: &Store) -> String {
    let o = origin();
    let sid = a
        .ensure_session(SESSION, "main", Some(&o))
        .await
        .unwrap()
        .id;
    for id in ["r1", "r2"] {
        queue(a, id, SESSION, &sid, &o).await;
    }
    start(a, "r1", SESSION, &sid, Claim::Oldest).await;
    sid
}

/// One session's runs run one at a time across processes: while `a` runs one, `b`'s start
/// of another is refused (and stores nothing of the start); once `a`'s ends, it starts.
/// Another session is not held up. Catches: two processes running one session's turns at
/// once (both would claim its messages and answer twice).
#[tokio::test]
async fn a_session_runs_on_one_process_at_a_time() {
    let db = TestDb::create().await.unwrap();
    let (a, b) = (member(&db, "a", LIVE).await, member(&db, "b", LIVE).await);
    let (key, sid, o) = (SESSION, r1_running_r2_queued(&a).await, origin());
    let refused = b
        .start_run("r2", key, &sid, None, Some(Claim::Oldest))
        .await;
    assert!(
        matches!(refused, Err(StoreError::SessionBusy(_))),
        "{refused:?}"
    );
    assert_eq!(
        b.get_run("r2").await.unwrap().unwrap().status,
        RunStatus::Queued
    );
    assert_eq!(b.inbox_len(key).await.unwrap(), 1, "nothing claimed");

    // Another session starts at once.
    let other = "agent:main:webchat:direct:chat-2";
    let osid = b.ensure_session(other, "main", Some(&o)).await.unwrap().id;
    queue(&b, "r3", other, &osid, &o).await;
    start(&b, "r3", other, &osid, Claim::All).await;

    a.finish_run("r1", &RunEnd::bare(RunStatus::Succeeded, None))
        .await
        .unwrap();
    let started = b
        .start_run("r2", key, &sid, None, Some(Claim::Oldest))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(started.claimed.len(), 1);
    assert_eq!(run_lease(&b, "r2").await, ("b".into(), 1));
}

/// A process that stops renewing loses its runs and the messages it was sending once
/// their leases expire, not before: another process takes them over (the runs leased to
/// it, oldest first; the messages back to pending). A running run is taken over only while
/// no other run of its session runs. Catches: a takeover of live work (run twice), or
/// work that nobody takes over after a crash.
#[tokio::test]
async fn a_dead_process_s_runs_and_sends_are_taken_over_once_its_leases_expire() {
    let db = TestDb::create().await.unwrap();
    let short = Duration::from_millis(600);
    let (a, b) = (member(&db, "a", short).await, member(&db, "b", LIVE).await);
    r1_running_r2_queued(&a).await;
    let o = origin();
    a.enqueue_outbox("k1", &o, "hi").await.unwrap();
    let row = a.due_outbox(10).await.unwrap().remove(0);
    assert!(a.claim_outbox(row.id).await.unwrap());

    // Live: nothing to take.
    assert_eq!(b.take_over_runs().await.unwrap(), vec![]);
    assert_eq!(b.reset_sending_outbox().await.unwrap(), 0);

    tokio::time::sleep(short + Duration::from_millis(100)).await;
    let taken: Vec<_> = b
        .take_over_runs()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.id, r.status))
        .collect();
    assert_eq!(
        taken,
        vec![
            ("r1".to_string(), RunStatus::Running),
            ("r2".to_string(), RunStatus::Queued)
        ]
    );
    assert_eq!(run_lease(&b, "r1").await, ("b".into(), 1));
    assert_eq!(b.take_over_runs().await.unwrap(), vec![], "taken once");
    assert_eq!(b.reset_sending_outbox().await.unwrap(), 1);
    assert_eq!(
        b.outbox_state("k1").await.unwrap().map(|s| s.0),
        Some("pending".to_string())
    );
}

/// A running run whose process died is not resumed while another run of its session runs
/// under a live lease (the new holder of the chat started one meanwhile): it waits until
/// that one has ended. Catches: a takeover that resumes a run beside a live one.
#[tokio::test]
async fn a_cut_run_waits_for_its_session_s_live_run_before_it_is_taken_over() {
    let db = TestDb::create().await.unwrap();
    let short = Duration::from_millis(600);
    let (a, b) = (member(&db, "a", short).await, member(&db, "b", LIVE).await);
    let o = origin();
    let key = "agent:main:webchat:direct:chat-1";
    let sid = a.ensure_session(key, "main", Some(&o)).await.unwrap().id;
    queue(&a, "r1", key, &sid, &o).await;
    start(&a, "r1", key, &sid, Claim::All).await;
    tokio::time::sleep(short + Duration::from_millis(100)).await;
    // `b` took the chat over and started a run of the session before looking for orphans.
    queue(&b, "r2", key, &sid, &o).await;
    start(&b, "r2", key, &sid, Claim::All).await;
    assert_eq!(b.take_over_runs().await.unwrap(), vec![]);
    b.finish_run("r2", &RunEnd::bare(RunStatus::Succeeded, None))
        .await
        .unwrap();
    let taken = b.take_over_runs().await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].id, "r1");
}

/// Two processes firing one archive timer at once: exactly one fires it. Catches: a
/// timer fired twice (two `subagent.archived` events, two archive stamps).
#[tokio::test]
async fn a_timer_fired_by_two_processes_at_once_fires_once() {
    let db = TestDb::create().await.unwrap();
    let (a, b) = (member(&db, "a", LIVE).await, member(&db, "b", LIVE).await);
    for round in 0..20 {
        let key = format!("agent:main:subagent:t{round}");
        a.execute_for_tests(&format!(
            "INSERT INTO timers (kind, target, due_at) VALUES ('archive', '{key}', 0)"
        ))
        .await
        .unwrap();
        let (id, ..) = a.next_timer().await.unwrap().unwrap();
        let (one, two) = tokio::join!(
            a.fire_archive_timer(id, &key),
            b.fire_archive_timer(id, &key)
        );
        assert_eq!(
            u8::from(one.unwrap()) + u8::from(two.unwrap()),
            1,
            "round {round}"
        );
    }
}

/// The triggers exist only while the database is in shared mode: put in it by two
/// processes at once (idempotent, no error), taken out by a standby-mode process, after
/// which nothing is leased (standby mode's turn pays nothing for them). Catches: a
/// standby-mode database that still runs the triggers, or two starts that race.
#[tokio::test]
async fn the_lease_triggers_exist_only_in_shared_mode() {
    let db = TestDb::create().await.unwrap();
    let (a, b) = (member(&db, "a", LIVE).await, member(&db, "b", LIVE).await);
    let triggers = "SELECT count(*) FROM pg_trigger WHERE tgname LIKE '%_lease_%'";
    let (one, two) = tokio::join!(a.set_shared_mode(true), b.set_shared_mode(true));
    one.unwrap();
    two.unwrap();
    assert_eq!(a.count_for_tests(triggers).await.unwrap(), 3);

    a.set_shared_mode(false).await.unwrap();
    assert_eq!(a.count_for_tests(triggers).await.unwrap(), 0);
    let o = origin();
    let key = "agent:main:webchat:direct:chat-1";
    let sid = a.ensure_session(key, "main", Some(&o)).await.unwrap().id;
    a.create_run(&new_run("r1", key, &sid, &o)).await.unwrap();
    assert_eq!(run_lease(&a, "r1").await, ("".into(), 0));
}
