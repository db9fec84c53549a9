//! Live config reload: a valid edit applies within about a second; an invalid edit is
//! logged and ignored while the old config keeps working.

use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;

use crate::common::{chat, config_for, start, WAIT};

async fn lane_cap(gw: &switchboard_testkit::harness::Gateway) -> String {
    let text = crate::common::get_text(gw, "/metrics").await;
    text.lines()
        .find(|l| l.starts_with("switchboard_lane_capacity{lane=\"main\"}"))
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn edits_apply_live_and_invalid_edits_are_ignored() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 4"
    );

    let mark = gw.log_mark();
    gw.write_config(&config_for(
        &fake,
        json!({"agents": {"defaults": {"maxConcurrent": 2}}}),
    ))
    .await
    .unwrap();
    gw.wait_for_log_since(mark, "config reloaded", Duration::from_secs(5))
        .await
        .unwrap();
    gw.wait_for_log_since(mark, "config applied", Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 2"
    );

    let mark = gw.log_mark();
    gw.write_config("{ agents: { defaults: { maxConcurent: 3 } } }")
        .await
        .unwrap();
    gw.wait_for_log_since(mark, "maxConcurent", Duration::from_secs(8))
        .await
        .unwrap();
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 2"
    );
    let mut ws = chat(&gw, "main").await;
    ws.send_text("old config still works").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "echo: old config still works"
    );

    // A half-written file: not applied, and the next complete write is.
    let mark = gw.log_mark();
    tokio::fs::write(gw.config_path(), "{ agents: { defaults: { maxConc")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    tokio::fs::write(
        gw.config_path(),
        config_for(&fake, json!({"agents": {"defaults": {"maxConcurrent": 6}}})),
    )
    .await
    .unwrap();
    gw.wait_for_log_since(mark, "config applied", Duration::from_secs(8))
        .await
        .unwrap();
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 6"
    );
}

/// Runs `switchboard <args> <path>` with a scratch state dir; (exit code, stderr).
async fn run_cli(args: &[&str], path: &std::path::Path) -> (Option<i32>, String) {
    let state = tempfile::tempdir().unwrap();
    let out = crate::common::output(crate::common::cli(state.path()).args(args).arg(path)).await;
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Catches: a config nested a few thousand levels deep overflowing the JSON5 parser's
/// stack: `config validate` and `run` died with SIGABRT, and the same file written over a
/// running daemon's config killed the daemon.
#[tokio::test]
async fn a_deeply_nested_config_is_refused_and_a_running_daemon_survives_it() {
    let deep = format!("{{ deep: {}{} }}", "[".repeat(5000), "]".repeat(5000));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json5");
    std::fs::write(&path, &deep).unwrap();
    let error = "(line 1, col 40): objects and arrays are nested more than 32 levels deep";
    for args in [&["config", "validate"][..], &["run", "--config"][..]] {
        let (code, stderr) = run_cli(args, &path).await;
        assert_eq!(code, Some(64), "{args:?}: {stderr}");
        assert!(stderr.contains(error), "{args:?}: {stderr}");
    }

    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mark = gw.log_mark();
    gw.write_config(&deep).await.unwrap();
    gw.wait_for_log_since(mark, "keeping the config in force", Duration::from_secs(8))
        .await
        .unwrap();
    assert!(gw
        .stderr_lines()
        .iter()
        .any(|l| l.contains("nested more than 32 levels deep")));
    let mut ws = chat(&gw, "main").await;
    ws.send_text("still alive?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: still alive?");
    // Reload still works.
    let mark = gw.log_mark();
    gw.write_config(&config_for(
        &fake,
        json!({"agents": {"defaults": {"maxConcurrent": 3}}}),
    ))
    .await
    .unwrap();
    gw.wait_for_log_since(mark, "config applied", Duration::from_secs(8))
        .await
        .unwrap();
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 3"
    );
}

/// Catches: durations and counts out of range passing validation (a debounce of 500
/// billion years panicked the reload task at the first edit; archiveAfterMinutes 10^15
/// wrapped to -1 ms and archived children at once).
#[tokio::test]
async fn out_of_range_durations_and_counts_are_refused_with_key_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json5");
    std::fs::write(
        &path,
        "{\n  gateway: { port: 0, reload: { debounce: \"500000000000y\" } },\n  agents: { defaults: { subagents: { archiveAfterMinutes: 1000000000000000 } } },\n}\n",
    )
    .unwrap();
    for args in [&["config", "validate"][..], &["run", "--config"][..]] {
        let (code, stderr) = run_cli(args, &path).await;
        assert_eq!(code, Some(64), "{args:?}: {stderr}");
        assert!(
            stderr.contains("gateway.reload.debounce (line 2, col 33): must be between \"0s\" and \"1m\", got \"500000000000years\""),
            "{stderr}"
        );
        assert!(
            stderr.contains("agents.defaults.subagents.archiveAfterMinutes (line 3, col 38): must be between 0 and 525600 minutes (0 = never archive), got 1000000000000000"),
            "{stderr}"
        );
    }
}
