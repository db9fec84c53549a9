//! Two real `switchboard run` processes in shared mode (`storage.processes: "shared"`) on
//! one PostgreSQL database, and the bus between them (`LISTEN`/`NOTIFY`): a run on B is
//! seen on A's event stream, and `/stop` or the API's stop sent to A stops it on B — the
//! model call B made is dropped, and A's answer counts the run it does not run itself; A's
//! `/status` and `GET /api/sessions` show B's run as running.
//!
//! Both start on an empty database (each recovers what it finds at start; with nothing
//! stored, nothing is recovered twice).

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::{Gateway, GatewayBuilder, WsClient};
use switchboard_testkit::pg::TestDb;

use crate::common::{chat, config_for, get_json, get_text, post_json, BIN, WAIT};
use crate::subagents::spawn_call;

/// A shared-mode gateway on `db`.
async fn shared(fake: &FakeModel, db: &TestDb) -> Gateway {
    let cfg = json!({
        "gateway": {"port": 0, "shutdownGrace": "2s"},
        "storage": {"url": db.url(), "processes": "shared", "leaseTimeout": "5s"},
    });
    GatewayBuilder::new(BIN)
        .config(config_for(fake, cfg))
        .start()
        .await
        .unwrap()
}

/// The next event on `events` of type `ty` for session `key`.
async fn next_event(events: &mut WsClient, ty: &str, key: &str) -> Value {
    loop {
        let frame = events.next_frame(WAIT).await.unwrap();
        let ev = &frame["event"];
        if ev["type"] == ty && ev["sessionKey"] == key {
            return ev.clone();
        }
    }
}

/// `/stop` in a web chat on A stops the chat's run that B runs (posted to B through the
/// API), A's `/status` and session list show that run, and A's event stream shows it start
/// and end. (Catches: a stop or a status that looks only at A's own runs — "Nothing to
/// stop." or "Running: no" while B's run goes on —, and events that stay on the process
/// that emitted them.)
#[tokio::test]
async fn stop_through_one_process_stops_the_run_on_the_other_and_its_events_reach_both() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("slow task", Step::Hang);
    let a = shared(&fake, &db).await;
    let b = shared(&fake, &db).await;
    let mut a_events = WsClient::connect(&a.events_url()).await.unwrap();
    let key = "agent:main:main";

    let (status, accepted) = post_json(
        &b,
        &format!("/api/sessions/{key}/messages"),
        json!({"text": "slow task"}),
    )
    .await;
    assert_eq!(status, 202, "{accepted}");
    let started = next_event(&mut a_events, "run.started", key).await;
    assert_eq!(started["runId"], accepted["runId"]);
    fake.wait_for_requests(1, WAIT).await.unwrap();

    // A does not run it, and says it runs: `/status` and `GET /api/sessions` ask the store.
    let run_id = accepted["runId"].as_str().unwrap();
    let mut ws = chat(&a, "main").await;
    ws.send_text("/status").await.unwrap();
    let status_text = ws.next_message(WAIT).await.unwrap();
    assert!(
        status_text.contains(&format!("Running: yes (run {})", &run_id[..8])),
        "{status_text}"
    );
    let sessions = get_json(&a, "/api/sessions").await;
    let listed = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionKey"] == key)
        .unwrap();
    assert_eq!(listed["running"], accepted["runId"], "{listed}");

    ws.send_text("/stop").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "Stopped 1 run.");
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    let ended = next_event(&mut a_events, "run.ended", key).await;
    assert_eq!(
        (&ended["runId"], &ended["status"]),
        (&accepted["runId"], &json!("cancelled"))
    );
    b.wait_for_log("run stopped by a stop published on the bus", WAIT)
        .await
        .unwrap();
    let run = get_json(
        &a,
        &format!("/api/runs/{}", accepted["runId"].as_str().unwrap()),
    )
    .await;
    assert_eq!(run["status"], "cancelled", "{run}");
    // What crossed is counted on both sides; nothing dropped or refused.
    for gw in [&a, &b] {
        let metrics = get_text(gw, "/metrics").await;
        let count = |name: &str| -> u64 {
            let prefix = format!("{name} ");
            let line = metrics.lines().find(|l| l.starts_with(&prefix));
            line.unwrap()[prefix.len()..].parse().unwrap()
        };
        assert!(count("switchboard_bus_sent_total") > 0, "{metrics}");
        assert!(count("switchboard_bus_received_total") > 0, "{metrics}");
        assert_eq!(count("switchboard_bus_dropped_total"), 0, "{metrics}");
        assert_eq!(count("switchboard_bus_refused_total"), 0, "{metrics}");
    }
}

/// The API's stop of a sub-agent, sent to A, stops the child B runs: A answers
/// `stopped: true` and the child ends `cancelled`. (Catches: `stopped: false` and a child
/// running on, because A has no run of it.)
#[tokio::test]
async fn the_apis_stop_through_one_process_stops_a_child_on_the_other() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "fan out",
        Step::ToolCalls(vec![spawn_call("slow child", json!({}))]),
    );
    fake.push_for("fan out", Step::text("spawned"));
    fake.push_for("slow child", Step::Hang);
    let a = shared(&fake, &db).await;
    let b = shared(&fake, &db).await;
    let mut a_events = WsClient::connect(&a.events_url()).await.unwrap();

    let (status, answer) = post_json(
        &b,
        "/api/sessions/agent:main:ops/messages",
        json!({"text": "fan out", "wait": true}),
    )
    .await;
    assert_eq!((status, &answer["reply"]), (200, &json!("spawned")));
    fake.wait_for_requests(3, WAIT).await.unwrap();
    let children = get_json(&a, "/api/subagents?requester=agent:main:ops").await;
    let child = &children["subagents"][0];
    let id = child["runId"].as_str().unwrap();
    let child_key = child["childSessionKey"].as_str().unwrap().to_string();

    let (status, stopped) = post_json(&a, &format!("/api/subagents/{id}/stop"), json!({})).await;
    assert_eq!(
        (status, stopped),
        (200, json!({"runId": id, "stopped": true}))
    );
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    let ended = next_event(&mut a_events, "run.ended", &child_key).await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
}

/// `wait: true` on A for a session whose run B runs: A's run for the message waits until
/// B's has ended (one session's runs never run on two processes at once), then answers.
#[tokio::test]
async fn wait_true_on_one_process_waits_for_the_sessions_run_on_the_other() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    fake.push_for("first", Step::gated(&gate, Step::text("first answer")));
    fake.push_for("second", Step::text("second answer"));
    let a = shared(&fake, &db).await;
    let b = shared(&fake, &db).await;
    let key = "agent:main:w";
    let (status, _) = post_json(
        &b,
        &format!("/api/sessions/{key}/messages"),
        json!({"text": "first"}),
    )
    .await;
    assert_eq!(status, 202);
    fake.wait_for_requests(1, WAIT).await.unwrap();
    let waiting = {
        let a_url = format!("{}/api/sessions/{key}/messages", a.base_url());
        let http = a.http();
        tokio::spawn(async move {
            let r = http
                .post(a_url)
                .json(&json!({"text": "second", "wait": true}))
                .send()
                .await
                .unwrap();
            r.json::<Value>().await.unwrap()
        })
    };
    a.wait_for_log("waiting for this session's run on another process", WAIT)
        .await
        .unwrap();
    gate.open();
    let answer = waiting.await.unwrap();
    assert_eq!(answer["status"], "succeeded", "{answer}");
    assert!(
        answer["reply"].as_str().unwrap().contains("second answer"),
        "{answer}"
    );
    // Never two model calls of the session at once: A's run waited for B's.
    assert_eq!(fake.max_in_flight(), 1);
}
