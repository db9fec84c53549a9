//! Process lifecycle: invalid config at start, graceful shutdown.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step};

use crate::common::{chat, start, BIN, WAIT};

#[tokio::test]
async fn an_invalid_config_exits_64_and_names_every_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json5");
    std::fs::write(
        &path,
        "{\n  gateway: { port: \"high\" },\n  agents: { defaults: { maxConcurent: 2 } },\n}\n",
    )
    .unwrap();
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--config"])
        .arg(&path)
        .env("SWITCHBOARD_STATE_DIR", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .await
        .unwrap();
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

    let out = tokio::process::Command::new(BIN)
        .args(["config", "validate"])
        .arg(&path)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    std::fs::write(&path, "{ gateway: { port: 0 } }").unwrap();
    let out = tokio::process::Command::new(BIN)
        .args(["config", "validate"])
        .arg(&path)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[tokio::test]
async fn sigterm_lets_a_running_turn_finish_and_exits_zero() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "finish me",
        Step::Delay(
            Duration::from_millis(700),
            Box::new(Step::Text("finished".into())),
        ),
    );
    let mut gw = start(&fake, json!({"gateway": {"shutdownGrace": "10s"}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("finish me").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    let status = gw.terminate().await.unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(fake.dropped(), 0, "the turn was allowed to finish");
    let _ = ws.next_message(Duration::from_secs(1)).await;
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
