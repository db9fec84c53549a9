//! Sub-agent lifecycle hooks end to end (`hooks.SubagentStart`, `hooks.SubagentStop`): a
//! start script that refuses a spawn (the model gets its stderr), a stop script and a stop
//! URL hook that receive the child's status, result and stats, a stop hook that hangs and
//! does not hold the announce back; and a bad hook entry refused by `config validate`.

use std::time::Duration;

use axum::{routing::post, Router};
use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::harness::GatewayBuilder;

use crate::common::{chat, cli, config_for, BIN, WAIT};
use crate::subagents::spawn_call;

/// A start hook that refuses spawns whose task mentions "forbidden" (exit 2, its stderr
/// the reason); a stop hook that hangs first (killed at its 1 s timeout, never delaying
/// the announce), then a stop script and a stop URL that each get the child's payload.
/// (Catches: a refusal the model cannot read, a refused child created anyway, a stop
/// payload without status/result/stats, or an announce waiting for a hanging hook.)
#[tokio::test]
async fn start_hooks_refuse_and_stop_hooks_report_without_delaying_the_announce() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "two jobs",
        Step::ToolCalls(vec![
            spawn_call("a forbidden job", json!({})),
            spawn_call("count the moons", json!({"label": "moons"})),
        ]),
    );
    fake.push_for("two jobs", Step::text("one started"));
    fake.push_for("count the moons", Step::text("95 moons"));
    fake.push_for("Your task has ended", Step::text("95 moons."));

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Option<String>, Value)>();
    let app = Router::new().route(
        "/stop",
        post(
            move |h: axum::http::HeaderMap, axum::Json(v): axum::Json<Value>| {
                let tx = tx.clone();
                async move {
                    let auth = h
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    let _ = tx.send((auth, v));
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let start_hook = "grep -q forbidden && { echo 'no forbidden jobs here' >&2; exit 2; }; exit 0";
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"hooks": {
                "SubagentStart": [{"command": start_hook, "timeout": "10s"}],
                "SubagentStop": [
                    {"command": "sleep 300", "timeout": "1s"},
                    {"command": "cat > stop.json", "timeout": "10s"},
                    {"url": format!("http://{addr}/stop"), "headers": {"Authorization": "Bearer h1"}},
                ],
            }}),
        ))
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("two jobs").await.unwrap();
    let (answer, announces) = crate::common::answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "one started");
    assert!(
        announces[0].starts_with("Status: success\nResult: 95 moons."),
        "{}",
        announces[0]
    );

    // The refusal is the first spawn's tool result; only the second child exists.
    let req = fake
        .requests()
        .into_iter()
        .find(|r| r.body["messages"].as_array().unwrap().last().unwrap()["role"] == "tool")
        .unwrap();
    let results: Vec<String> = req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        results[0],
        "error: the spawn was refused by a SubagentStart hook: no forbidden jobs here"
    );
    assert!(results[1].contains("\"accepted\""), "{}", results[1]);
    let children = crate::common::get_json(&gw, "/api/subagents").await;
    assert_eq!(
        children["subagents"].as_array().unwrap().len(),
        1,
        "{children}"
    );

    // The URL hook ran after the hanging one was killed.
    let (auth, body) = tokio::time::timeout(WAIT, rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(auth.as_deref(), Some("Bearer h1"));
    assert_eq!(
        (
            &body["event"],
            &body["status"],
            &body["result"],
            &body["label"],
            &body["task"]
        ),
        (
            &json!("SubagentStop"),
            &json!("success"),
            &json!("95 moons."),
            &json!("moons"),
            &json!("count the moons")
        )
    );
    assert!(
        body["stats"]["runtimeMs"].is_i64() && body["stats"]["outputTokens"].is_i64(),
        "{body}"
    );
    // The script hook got the same payload on its stdin, in the agent's workspace.
    let stop_file = gw.state_dir().join("workspace").join("stop.json");
    let mut seen = None;
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(&stop_file) {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                seen = Some(v);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen.as_ref(), Some(&body));
    server.abort();
}

/// `switchboard config validate` names a bad hook entry by its key path and fails.
/// (Catches: a hook that can never run accepted at start.)
#[tokio::test]
async fn config_validate_reports_bad_hook_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.json5");
    std::fs::write(
        &path,
        r#"{hooks: {SubagentStop: [{command: "x", url: "http://127.0.0.1:1/"}]}}"#,
    )
    .unwrap();
    let (code, stdout, stderr) =
        crate::cli_config::run(cli(dir.path()).args(["config", "validate"]).arg(&path)).await;
    let all = format!("{stdout}{stderr}");
    assert_ne!(code, 0, "{all}");
    assert!(
        all.contains("hooks.SubagentStop[0] (line 1, col 25): give `command` or `url`, not both"),
        "{all}"
    );
}
