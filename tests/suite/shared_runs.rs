//! Two real `switchboard run` processes in shared mode (`storage.processes: "shared"`) on
//! one PostgreSQL database: both act at once; the run a SIGKILLed process was in the
//! middle of is taken over by the other once its lease expires, resumed from its
//! transcript and finished once; sub-agents spread over both are announced once each.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sqlx::{Connection as _, PgConnection, Row as _};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

use crate::common::{config_for, get_json, post_json, BIN, WAIT};
use crate::subagents::spawn_call;

/// A shared-mode gateway on `db` with a 2 s lease.
fn shared(fake: &FakeModel, db: &TestDb) -> GatewayBuilder {
    let cfg = json!({
        "gateway": {"shutdownGrace": "2s"},
        "storage": {"url": db.url(), "leaseTimeout": "2s", "processes": "shared"},
    });
    GatewayBuilder::new(BIN).config(config_for(fake, cfg))
}

/// `POST /api/sessions/<key>/messages` on `gw`.
async fn say(gw: &Gateway, key: &str, text: &str, wait: bool) -> Value {
    let path = format!("/api/sessions/{key}/messages");
    post_json(gw, &path, json!({"text": text, "wait": wait}))
        .await
        .1
}

/// Both processes are ready at once and each answers turns; a run in flight on A when A
/// is SIGKILLed is resumed by B (its model call made again) once A's lease expires, and
/// ends `succeeded` with B's answer, its message claimed once.
#[tokio::test]
async fn a_killed_process_s_run_is_finished_by_the_other() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let never = Gate::new();
    fake.push_for("slowx", Step::gated(&never, Step::text("from a")));
    fake.push_for("slowx", Step::text("from b"));
    let mut a = shared(&fake, &db).start().await.unwrap();
    let b = shared(&fake, &db).start().await.unwrap();
    a.wait_for_log("sharing the database's work", WAIT)
        .await
        .unwrap();
    b.wait_for_log("sharing the database's work", WAIT)
        .await
        .unwrap();

    for (gw, key) in [(&a, "agent:main:api:one"), (&b, "agent:main:api:two")] {
        let answer = say(gw, key, "hello", true).await;
        assert_eq!(answer["status"], "succeeded", "{answer}");
        assert_eq!(answer["reply"], "echo: hello", "{answer}");
    }

    let before = fake.request_count();
    let started = say(&a, "agent:main:api:slow", "slowx", false).await;
    let run_id = started["runId"].as_str().unwrap().to_owned();
    fake.wait_for_requests(before + 1, WAIT).await.unwrap();
    a.kill().await.unwrap();
    let killed = Instant::now();

    let done = loop {
        let r = get_json(&b, &format!("/api/runs/{run_id}")).await;
        if r["status"] != "running" && r["status"] != "queued" {
            break r;
        }
        assert!(killed.elapsed() < WAIT, "not taken over in {WAIT:?}: {r}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    println!(
        "takeover: SIGKILL to the run's end on the other process in {:?} (leaseTimeout 2s)",
        killed.elapsed()
    );
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_eq!(done["reply"], "from b", "{done}");
    b.wait_for_log(
        "took over runs whose process stopped renewing its leases",
        WAIT,
    )
    .await
    .unwrap();
    let calls = fake
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("slowx"))
        .count();
    assert_eq!(calls, 2, "one call on A (cut), one on B");
}

/// The registry as (run id, outcome, announce state, fan-in messages naming the child in
/// its requester's transcript), by run id.
async fn children(db: &TestDb) -> Vec<(String, Option<String>, String, i64)> {
    let mut c = PgConnection::connect(db.url()).await.unwrap();
    let rows = sqlx::query(
        "SELECT r.run_id, r.outcome, r.announce_state,
                (SELECT count(*) FROM messages m
                  WHERE m.content LIKE '[sub-agent result: from child run ' || r.run_id || '%')
           FROM subagent_runs r ORDER BY r.run_id",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();
    rows.iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect()
}

/// 100 sub-agents spread over two shared-mode processes (each runs a parent that spawns
/// 50); one process is SIGKILLed with children running, queued and announcing, then
/// started again: every child ends `success` and is announced exactly once — one announce
/// row, one fan-in message in its requester's transcript.
#[tokio::test]
async fn sub_agents_over_two_processes_are_announced_once_when_one_is_killed() {
    const N: usize = 50;
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    for fleet in ["fleet a", "fleet b"] {
        let calls = (0..N)
            .map(|i| spawn_call(&format!("child of {fleet} {i}"), json!({})))
            .collect();
        fake.push_for(&format!("spawn {fleet}"), Step::ToolCalls(calls));
        fake.push_for(&format!("spawn {fleet}"), Step::text("fleet spawned"));
    }
    // More steps than children: calls the kill cut are made again.
    for i in 0..6 * N {
        let ms = 100 + 40 * (i as u64 % 7);
        fake.push_for(
            "child of fleet",
            Step::delayed(Duration::from_millis(ms), Step::text("child done")),
        );
        fake.push_for(
            "Your task has ended",
            Step::delayed(Duration::from_millis(ms / 2), Step::text("child summary")),
        );
    }
    let mut a = shared(&fake, &db).start().await.unwrap();
    let b = shared(&fake, &db).start().await.unwrap();
    say(&a, "agent:main:api:fa", "spawn fleet a", false).await;
    say(&b, "agent:main:api:fb", "spawn fleet b", false).await;

    let deadline = Instant::now() + WAIT;
    loop {
        let rows = children(&db).await;
        let done = rows.iter().filter(|r| r.1.is_some()).count();
        if rows.len() == 2 * N && done >= 12 {
            assert!(done < 2 * N, "the kill must find children in flight");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "children never got going: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.kill().await.unwrap();
    let _a_again = shared(&fake, &db).start().await.unwrap();

    let deadline = Instant::now() + Duration::from_secs(90);
    let rows = loop {
        let rows = children(&db).await;
        let quiet = rows
            .iter()
            .all(|r| r.1.is_some() && r.2 != "pending" && r.2 != "none");
        if quiet {
            break rows;
        }
        assert!(Instant::now() < deadline, "not quiet: {rows:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(rows.len(), 2 * N);
    for (run_id, outcome, state, fan_ins) in &rows {
        assert_eq!(outcome.as_deref(), Some("success"), "{run_id}");
        assert_eq!(state, "queued", "{run_id}");
        assert_eq!(*fan_ins, 1, "{run_id} announced {fan_ins} times");
    }
    let mut c = PgConnection::connect(db.url()).await.unwrap();
    let announces: i64 =
        sqlx::query_scalar("SELECT count(*) FROM outbox WHERE key LIKE 'announce:%'")
            .fetch_one(&mut c)
            .await
            .unwrap();
    assert_eq!(announces, 2 * N as i64);
    c.close().await.unwrap();
    drop(b);
    fake.assert_no_violations();
}
