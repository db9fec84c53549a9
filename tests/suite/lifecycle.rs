//! Process lifecycle: invalid config at start, graceful shutdown, what a restart keeps of
//! a run (its usage, first start and timeout budget; `subagents.onRestart`), and a panic
//! inside a run.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step, ToolCall};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};

use crate::common::{
    assert_standing_by, chat, cli, config_for, free_port, get_json, get_text, output, start, BIN,
    WAIT,
};
use crate::record::{rest_of_socket, sent_once};
use crate::subagents::{announces, spawn_call};

#[tokio::test]
async fn an_invalid_config_exits_64_and_names_every_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json5");
    std::fs::write(
        &path,
        "{\n  gateway: { port: \"high\" },\n  agents: { defaults: { maxConcurent: 2 } },\n}\n",
    )
    .unwrap();
    let out = output(cli(dir.path()).args(["run", "--config"]).arg(&path)).await;
    assert_eq!(out.status.code(), Some(64));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("gateway.port") && err.contains("line 2"),
        "{err}"
    );
    assert!(
        err.contains("maxConcurent") && err.contains("line 3"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing was bound");

    let out = output(cli(dir.path()).args(["config", "validate"]).arg(&path)).await;
    assert_eq!(out.status.code(), Some(64));
    std::fs::write(&path, "{ gateway: { port: 0 } }").unwrap();
    let out = output(cli(dir.path()).args(["config", "validate"]).arg(&path)).await;
    assert_eq!(out.status.code(), Some(0));
}

/// SIGTERM lets the running turn finish within `shutdownGrace`, delivers its reply and
/// exits 0 with the outbox flushed. (Catches: shutdown cancelling running turns at once —
/// the model call is dropped —, or exiting before the reply's outbox row is sent: the
/// chat never gets it, the row stays pending.)
#[tokio::test]
async fn sigterm_lets_a_running_turn_finish_and_exits_zero() {
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    fake.push_for("finish me", Step::gated(&gate, Step::text("finished")));
    let mut gw = start(&fake, json!({"gateway": {"shutdownGrace": "10s"}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("finish me").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    let mark = gw.log_mark();
    gw.sigterm().await.unwrap();
    gw.wait_for_log_since(mark, "shutting down", WAIT)
        .await
        .unwrap();
    // The model answers only once the daemon is shutting down.
    gate.open();
    assert_eq!(gw.wait_exit().await.unwrap().code(), Some(0));
    assert_eq!(fake.dropped(), 0, "the turn was allowed to finish");
    assert_eq!(rest_of_socket(&mut ws).await, ["finished"]);
    assert_eq!(sent_once(&gw).await, ["finished"], "the outbox was flushed");
}

#[tokio::test]
async fn a_turn_cut_by_shutdown_resumes_after_restart() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("resume me", Step::Hang);
    let mut gw = start(&fake, json!({"gateway": {"shutdownGrace": "200ms"}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("resume me").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    gw.restart().await.unwrap();
    // The script for "resume me" is used up, so the resumed turn gets the echo.
    let mut ws = chat(&gw, "main").await;
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: resume me");
    fake.assert_no_violations();
}

/// `POST /api/sessions/{key}/messages` with `body`; the status and the JSON answer.
async fn post(gw: &Gateway, key: &str, body: Value) -> (u16, Value) {
    crate::common::post_json(gw, &format!("/api/sessions/{key}/messages"), body).await
}

/// Poll `/api/runs/{id}` (bounded) until the run has ended; its row.
async fn ended_run(gw: &Gateway, id: &str) -> Value {
    for _ in 0..400 {
        let run = get_json(gw, &format!("/api/runs/{id}")).await;
        if !matches!(run["status"].as_str(), Some("queued" | "running")) {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {id} never ended");
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// With `subagents.onRestart: "interrupt"`, a child that SIGTERM checkpointed mid-flight
/// ends as interrupted at the next start and announces so. (Catches: the checkpoint
/// putting the run back to `queued`, which recovery then resumed instead.)
#[tokio::test]
async fn on_restart_interrupt_also_ends_a_child_checkpointed_by_sigterm() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![spawn_call("stubborn child", json!({}))]),
    );
    fake.push_for("delegate", Step::Text("spawned".into()));
    fake.push_for("stubborn child", Step::Hang);
    let mut gw = start(
        &fake,
        json!({"gateway": {"shutdownGrace": "200ms"},
               "agents": {"defaults": {"subagents": {"onRestart": "interrupt"}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("delegate it").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "spawned");
    // The parent's two calls and the child's, which hangs.
    fake.wait_for_requests(3, WAIT).await.unwrap();
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    gw.restart().await.unwrap();
    let mut ws = chat(&gw, "main").await;
    let got = announces(&mut ws, 1, WAIT).await;
    assert!(
        got[0].starts_with(
            "Status: unknown\nResult: (not available)\nNotes: the run was interrupted by a gateway restart"
        ),
        "{}",
        got[0]
    );
    let row = get_json(&gw, "/api/subagents").await["subagents"][0].clone();
    assert_eq!(row["outcome"], "interrupted");
    assert_eq!(fake.request_count(), 3, "the child was not resumed");
}

/// A run resumed after a restart goes on with its steps, usage and first start, and with
/// what is left of its run timeout: here nothing, so it times out without another model
/// call. (Catches: `Progress::default()` and a new `started_at` at each start, so that a
/// restart reset the Stats, the step budget and the run timeout.)
#[tokio::test]
async fn a_resumed_run_keeps_its_usage_first_start_and_timeout_budget() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "budgeted",
        Step::ToolCalls(vec![ToolCall::new("sessions_list", "{}")]),
    );
    fake.push_for("budgeted", Step::Hang);
    let mut gw = start(
        &fake,
        json!({"gateway": {"shutdownGrace": "200ms"}, "agents": {"defaults": {"timeout": "3s"}}}),
    )
    .await;
    let (code, posted) = post(&gw, "agent:main:main", json!({"text": "budgeted work"})).await;
    assert_eq!(code, 202, "{posted}");
    let id = posted["runId"].as_str().unwrap().to_string();
    fake.wait_for_requests(2, WAIT).await.unwrap();
    let before = get_json(&gw, &format!("/api/runs/{id}")).await;
    let first_start = before["startedAt"].as_i64().unwrap();
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    // Past the run's deadline (its first start + 3 s) before it is resumed.
    let left = first_start + 3_000 + 200 - now_ms();
    if left > 0 {
        tokio::time::sleep(Duration::from_millis(left as u64)).await;
    }
    gw.restart().await.unwrap();
    let run = ended_run(&gw, &id).await;
    assert_eq!(run["status"], "timeout", "{run}");
    assert_eq!(run["error"], "the run timed out after 3s");
    assert_eq!(run["startedAt"], first_start);
    // Both model calls counted: the one that asked for the tool (its tokens too) and the
    // one cut by the shutdown.
    assert_eq!(run["steps"], 2, "{run}");
    assert!(run["inputTokens"].as_i64().unwrap() > 0, "{run}");
    assert!(run["costUsd"].as_f64().unwrap() > 0.0, "{run}");
    assert_eq!(fake.request_count(), 2, "no model call after the restart");
}

/// A panic inside a run's task ends the run `failed` with a notice in its chat, answers
/// its `wait`ing API caller, and the gateway keeps serving the session. (Catches: a panic
/// leaving the run `running` forever: no notice, waiters timed out.) The panic comes from
/// the debug builds' fault hook (`SWITCHBOARD_FAULT_INJECTION=1`, tool `__fault_panic`).
#[tokio::test]
async fn a_panic_in_a_run_ends_it_failed_and_the_gateway_keeps_serving() {
    let fake = FakeModel::start().await.unwrap();
    let boom = || Step::ToolCalls(vec![ToolCall::new("__fault_panic", "{}")]);
    fake.push_for("explode", boom());
    fake.push_for("blow up", boom());
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(&fake, json!({})))
        .env("SWITCHBOARD_FAULT_INJECTION", "1")
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("explode now").await.unwrap();
    let notice = ws.next_message(WAIT).await.unwrap();
    assert!(notice.starts_with("⚠️ Internal error"), "{notice}");

    let (code, answer) = post(
        &gw,
        "agent:main:main",
        json!({"text": "blow up too", "wait": true, "timeoutSeconds": 20}),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["status"], "failed");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .starts_with("internal error: fault injection"),
        "{answer}"
    );
    let run = get_json(
        &gw,
        &format!("/api/runs/{}", answer["runId"].as_str().unwrap()),
    )
    .await;
    assert_eq!(run["status"], "failed");

    ws.send_text("still there?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: still there?");
    assert!(gw.wait_for_log("a run's task panicked", WAIT).await.is_ok());
}

/// Two `switchboard run` on one SQLite database file: the second stands by (binds nothing,
/// opens nothing) until the first is killed, then takes over the same database and answers.
/// (Catches: two processes on one file both running the same work; a standby that never
/// takes over because the lock outlived a SIGKILLed holder.)
#[tokio::test]
async fn a_second_process_on_one_sqlite_file_stands_by_until_the_first_is_gone() {
    let fake = FakeModel::start().await.unwrap();
    let db_dir = tempfile::tempdir().unwrap();
    let storage =
        json!({"storage": {"url": format!("sqlite://{}/shared.db", db_dir.path().display())}});
    let mut a = GatewayBuilder::new(BIN)
        .config(config_for(&fake, storage.clone()))
        .start()
        .await
        .unwrap();
    let port = free_port();
    let mut patch = storage;
    patch["gateway"] = json!({"port": port});
    let mut b = GatewayBuilder::new(BIN)
        .config(config_for(&fake, patch))
        .launch()
        .await
        .unwrap();
    b.wait_for_log("standing by: process ", WAIT).await.unwrap();
    assert_standing_by(&mut b, port).await;
    let (code, answer) = post(
        &a,
        "agent:main:shared",
        json!({"text": "one", "wait": true}),
    )
    .await;
    assert_eq!(
        (code, answer["status"].as_str()),
        (200, Some("succeeded")),
        "{answer}"
    );

    a.kill().await.unwrap();
    b.wait_ready().await.unwrap();
    let (code, answer) = post(
        &b,
        "agent:main:shared",
        json!({"text": "two", "wait": true}),
    )
    .await;
    assert_eq!(
        (code, answer["status"].as_str()),
        (200, Some("succeeded")),
        "{answer}"
    );
    // The same database: the session's transcript (NDJSON) holds both turns.
    let history = get_text(&b, "/api/sessions/agent:main:shared/transcript").await;
    let texts: Vec<String> = history
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(texts, ["one", "two"], "{history}");
}
