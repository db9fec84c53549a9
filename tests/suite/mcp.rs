//! MCP servers as tools end to end, against the test kit's server (`mcp-test-server`)
//! over stdio and streamable HTTP: calls through the scripted model, errors, a list that
//! changes, the built environment, a server killed mid-call and restarted, `/stop` and
//! the timeout cancelling a call, the tool policy, and children gone at shutdown.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::mcp_server;

use crate::common::{chat, config_for, get_json, get_text, start, BIN, WAIT};
use crate::tools_support::{call, script, wait_dead, wait_done, wait_gone};

/// A stdio server section for the test kit's server, logging to `log`.
fn kit(log: &Path) -> Value {
    json!({
        "command": mcp_server::binary().unwrap(),
        "env": {"MCP_TEST_LOG": log},
    })
}

/// The server `name` as `GET /api/mcp` shows it (with the gateway's `token`, if any).
async fn server(gw: &Gateway, token: Option<&str>, name: &str) -> Value {
    let all: Value = match token {
        None => get_json(gw, "/api/mcp").await,
        Some(t) => gw
            .http()
            .get(format!("{}/api/mcp", gw.base_url()))
            .bearer_auth(t)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap(),
    };
    all["servers"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name).cloned())
        .unwrap_or(Value::Null)
}

/// Wait (bounded) until `name` is ready and `pred` holds for it; its status.
async fn wait_server(gw: &Gateway, name: &str, pred: impl Fn(&Value) -> bool) -> Value {
    wait_server_with(gw, None, name, pred).await
}

async fn wait_server_with(
    gw: &Gateway,
    token: Option<&str>,
    name: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let s = server(gw, token, name).await;
        if s["state"] == "ready" && pred(&s) {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the MCP server {name} never got there: {s}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Wait (bounded) until the server's log holds `line`.
async fn wait_log(log: &Path, line: &str) {
    for _ in 0..800 {
        if std::fs::read_to_string(log).is_ok_and(|s| s.lines().any(|l| l == line)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let seen = std::fs::read_to_string(log).unwrap_or_default();
    panic!("the MCP server never logged {line:?}; its log: {seen:?}");
}

fn tool_names(body: &Value) -> Vec<String> {
    let mut names: Vec<String> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Catches: MCP tools not offered under `mcp__<server>__<tool>` with their schema, a
/// result not turned into text (parts joined, images named), `isError` shown as a
/// success, a list change not picked up, or a server missing from `/status`/`/metrics`.
#[tokio::test]
async fn stdio_server_tools_are_called_through_the_model() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"kit": kit(&log)}}}),
        ))
        .start()
        .await
        .unwrap();
    let s = wait_server(&gw, "kit", |_| true).await;
    assert_eq!(s["transport"], "stdio");
    assert!(s["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("mcp__kit__echo")));
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "e1",
        "mcp__kit__echo",
        r#"{"text": "héllo"}"#,
    )
    .await;
    assert_eq!(r, "héllo");
    let first = fake
        .requests()
        .into_iter()
        .find(|r| !tool_names(&r.body).is_empty())
        .unwrap();
    let echo = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__kit__echo")
        .cloned()
        .unwrap();
    assert_eq!(
        echo["function"]["parameters"]["required"],
        json!(["text"]),
        "{echo}"
    );
    let r = call(&fake, &mut ws, "e2", "mcp__kit__fail", "{}").await;
    assert_eq!(r, "error: it failed on purpose");
    let r = call(&fake, &mut ws, "e3", "mcp__kit__mixed", "{}").await;
    assert_eq!(
        r,
        "a picture:\n[image: image/png, 8 bytes base64]\n[resource link: file:///tmp/r.txt]"
    );
    let r = call(
        &fake,
        &mut ws,
        "e6",
        "mcp__kit__huge",
        r#"{"bytes": 200000}"#,
    )
    .await;
    assert!(
        r.ends_with(&format!(
            "\n…(cut: {} more bytes of the server's answer)",
            200_000 - (65_536 - 128)
        )),
        "{}",
        &r[r.len() - 80..]
    );
    let r = call(&fake, &mut ws, "e4", "mcp__kit__grow", "{}").await;
    assert_eq!(r, "grown");
    wait_server(&gw, "kit", |s| {
        s["tools"]
            .as_array()
            .is_some_and(|t| t.contains(&json!("mcp__kit__extra")))
    })
    .await;
    let r = call(&fake, &mut ws, "e5", "mcp__kit__extra", "{}").await;
    assert_eq!(r, "extra here");
    ws.send_text("/status").await.unwrap();
    let status = ws.next_message(WAIT).await.unwrap();
    assert!(
        status.contains("MCP kit (stdio): ready, 9 tools"),
        "{status}"
    );
    let metrics = get_text(&gw, "/metrics").await;
    assert!(
        metrics.contains("switchboard_mcp_server_up{server=\"kit\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("switchboard_mcp_server_tools{server=\"kit\"} 9"));
    fake.assert_no_violations();
}

/// The server's environment is PATH, HOME, LANG and its configured `env` (with `${VAR}`
/// substituted), never the daemon's provider key, bot token or gateway token. Catches: a
/// stdio server inheriting the daemon's environment.
#[tokio::test]
async fn a_stdio_server_gets_a_built_environment_without_secrets() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let mut section = kit(&log);
    section["env"]["GREETING"] = json!("${MCP_GREETING}");
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({
                "gateway": {"auth": {"token": "gateway-secret-token"}},
                "mcp": {"servers": {"kit": section}},
            }),
        ))
        .env("MCP_GREETING", "hello")
        .env("OPENAI_API_KEY", "sk-daemon-secret-key")
        .env("TELEGRAM_BOT_TOKEN", "123456:daemon-bot-token")
        .start()
        .await
        .unwrap();
    wait_server_with(&gw, Some("gateway-secret-token"), "kit", |_| true).await;
    let mut ws = WsClientExt::connect(&gw, "gateway-secret-token").await;
    let r = call(&fake, &mut ws, "v1", "mcp__kit__env", "{}").await;
    let names: Vec<&str> = r.lines().filter_map(|l| l.split('=').next()).collect();
    assert_eq!(
        names,
        vec!["GREETING", "HOME", "LANG", "MCP_TEST_LOG", "PATH"],
        "{r}"
    );
    assert!(r.contains("GREETING=hello"), "{r}");
    for secret in [
        "sk-daemon-secret-key",
        "daemon-bot-token",
        "gateway-secret-token",
        "test-key",
    ] {
        assert!(!r.contains(secret), "{secret} leaked: {r}");
    }
}

/// A WebSocket client for a gateway with a token.
struct WsClientExt;

impl WsClientExt {
    async fn connect(gw: &Gateway, token: &str) -> switchboard_testkit::harness::WsClient {
        let mut ws =
            switchboard_testkit::harness::WsClient::connect_with_bearer(&gw.ws_url("main"), token)
                .await
                .unwrap();
        ws.next_of_type("hello", WAIT).await.unwrap();
        ws
    }
}

/// A streamable HTTP server's tools work like a stdio server's. Catches: the HTTP
/// transport not connecting, or its tools not offered.
#[tokio::test]
async fn http_server_tools_are_called_through_the_model() {
    let http = mcp_server::HttpServer::start().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"mcp": {"servers": {"remote": {"url": http.url, "timeout": "10s"}}}}),
    )
    .await;
    let s = wait_server(&gw, "remote", |_| true).await;
    assert_eq!(s["transport"], "http");
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "h1",
        "mcp__remote__echo",
        r#"{"text": "over http"}"#,
    )
    .await;
    assert_eq!(r, "over http");
    let r = call(&fake, &mut ws, "h2", "mcp__remote__fail", "{}").await;
    assert_eq!(r, "error: it failed on purpose");
    http.stop().await;
}

/// A server killed during a call: the call fails with a clear error (no hang, no
/// crash), the server is restarted with its tools back (counted), and calls work again.
/// Catches: a dead server hanging the run, or never coming back.
#[tokio::test]
async fn a_server_killed_mid_call_fails_the_call_and_is_restarted() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"kit": kit(&log)}}}),
        ))
        .start()
        .await
        .unwrap();
    let before = wait_server(&gw, "kit", |_| true).await;
    let pid = before["pid"].as_u64().unwrap() as u32;
    let mut ws = chat(&gw, "main").await;
    script(&fake, "k1", "mcp__kit__slow", r#"{"ms": 60000}"#);
    ws.send_text("k1").await.unwrap();
    wait_log(&log, "call slow").await;
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_done(&mut ws, "k1", WAIT).await;
    let r = crate::tools_support::tool_result(&fake, "k1");
    assert!(
        r.starts_with("error: the MCP server `kit` closed the connection during the call"),
        "{r}"
    );
    let after = wait_server(&gw, "kit", |s| s["restarts"].as_u64() >= Some(1)).await;
    assert_ne!(after["pid"], before["pid"]);
    wait_gone(pid).await;
    let r = call(
        &fake,
        &mut ws,
        "k2",
        "mcp__kit__echo",
        r#"{"text": "back"}"#,
    )
    .await;
    assert_eq!(r, "back");
}

/// `/stop` during a call sends the server MCP's cancellation for it; a call past the
/// server's `timeout` is cancelled too and told to the model. Catches: a stopped or timed
/// out call left running on the server.
#[tokio::test]
async fn stop_and_timeout_cancel_the_call_on_the_server() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let mut section = kit(&log);
    section["timeout"] = json!("2s");
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"kit": section}}}),
        ))
        .start()
        .await
        .unwrap();
    wait_server(&gw, "kit", |_| true).await;
    let mut ws = chat(&gw, "main").await;
    let r = call(&fake, &mut ws, "t1", "mcp__kit__slow", r#"{"ms": 60000}"#).await;
    assert_eq!(r, "error: the MCP server `kit` did not answer within 2s");
    wait_log(&log, "cancelled slow").await;
    std::fs::remove_file(&log).unwrap();
    script(&fake, "t2", "mcp__kit__slow", r#"{"ms": 60000}"#);
    ws.send_text("t2").await.unwrap();
    wait_log(&log, "call slow").await;
    ws.send_text("/stop").await.unwrap();
    wait_log(&log, "cancelled slow").await;
}

/// `tools.deny` with a glob and `group:mcp` for sub-agents: the model is offered only
/// the allowed MCP tools. Catches: MCP tools escaping the tool policy.
#[tokio::test]
async fn the_tool_policy_filters_mcp_tools() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({
                "mcp": {"servers": {"kit": kit(&log)}},
                "tools": {"allow": ["read", "mcp__kit__*"], "deny": ["mcp__kit__e*"]},
            }),
        ))
        .start()
        .await
        .unwrap();
    wait_server(&gw, "kit", |_| true).await;
    let mut ws = chat(&gw, "main").await;
    let r = call(&fake, &mut ws, "p1", "mcp__kit__echo", r#"{"text": "x"}"#).await;
    assert!(r.starts_with("error: unknown tool `mcp__kit__echo`"), "{r}");
    assert_eq!(
        tool_names(&fake.requests()[0].body),
        vec![
            "mcp__kit__fail",
            "mcp__kit__grow",
            "mcp__kit__huge",
            "mcp__kit__mixed",
            "mcp__kit__pid",
            "mcp__kit__slow",
            "read"
        ]
    );
}

/// At shutdown a stdio server's process is killed: it never outlives the daemon.
/// Catches: an orphaned server process after `switchboard` stops.
#[tokio::test]
async fn stdio_servers_stop_with_the_daemon() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let mut gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"kit": kit(&log)}}}),
        ))
        .start()
        .await
        .unwrap();
    let s = wait_server(&gw, "kit", |_| true).await;
    let pid = s["pid"].as_u64().unwrap() as u32;
    gw.terminate().await.unwrap();
    wait_gone(pid).await;
}

/// A daemon killed with SIGKILL (no shutdown code runs) still takes its stdio servers
/// with it: they are spawned with the parent-death signal. Catches: an orphaned server
/// process after the daemon crashed or was killed.
#[tokio::test]
async fn stdio_servers_die_with_a_sigkilled_daemon() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let mut gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"kit": kit(&log)}}}),
        ))
        .start()
        .await
        .unwrap();
    let pid = wait_server(&gw, "kit", |_| true).await["pid"]
        .as_u64()
        .unwrap() as u32;
    gw.kill().await.unwrap();
    wait_dead(pid).await;
}

/// A config reload starts an added server, restarts only the one whose section changed
/// and stops a removed one (its process gone). Catches: a reload restarting every server,
/// or leaving a removed one running.
#[tokio::test]
async fn reload_touches_only_the_servers_that_changed() {
    let fake = FakeModel::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.log");
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"a": kit(&log)}}}),
        ))
        .start()
        .await
        .unwrap();
    let a = wait_server(&gw, "a", |_| true).await["pid"].clone();
    let both = json!({"mcp": {"servers": {"a": kit(&log), "b": kit(&log)}}});
    gw.write_config(&config_for(&fake, both)).await.unwrap();
    let b = wait_server(&gw, "b", |_| true).await["pid"].clone();
    assert_eq!(server(&gw, None, "a").await["pid"], a, "a was restarted");
    let mut changed = kit(&log);
    changed["timeout"] = json!("30s");
    let cfg = json!({"mcp": {"servers": {"a": changed.clone(), "b": kit(&log)}}});
    gw.write_config(&config_for(&fake, cfg)).await.unwrap();
    let a2 = wait_server(&gw, "a", |s| s["pid"] != a).await["pid"].clone();
    assert_eq!(server(&gw, None, "b").await["pid"], b, "b was restarted");
    wait_gone(a.as_u64().unwrap() as u32).await;
    let cfg = json!({"mcp": {"servers": {"a": changed}}});
    gw.write_config(&config_for(&fake, cfg)).await.unwrap();
    wait_gone(b.as_u64().unwrap() as u32).await;
    assert_eq!(server(&gw, None, "b").await, Value::Null);
    assert_eq!(server(&gw, None, "a").await["pid"], a2);
}
