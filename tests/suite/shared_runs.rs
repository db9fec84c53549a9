//! Two real `switchboard run` processes in shared mode (`storage.processes: "shared"`) on
//! one PostgreSQL database: both act at once, and the run a SIGKILLed process was in the
//! middle of is taken over by the other once its lease expires, resumed from its
//! transcript and finished once.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

use crate::common::{config_for, BIN, WAIT};

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
    gw.http()
        .post(format!("{}/api/sessions/{key}/messages", gw.base_url()))
        .json(&json!({"text": text, "wait": wait}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `GET /api/runs/<id>` on `gw`.
async fn run(gw: &Gateway, id: &str) -> Value {
    gw.http()
        .get(format!("{}/api/runs/{id}", gw.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
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
        let r = run(&b, &run_id).await;
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
