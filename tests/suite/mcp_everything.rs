//! The client against an MCP implementation we did not write: the reference
//! `@modelcontextprotocol/server-everything` from npm (installed by `tests/setup.sh` under
//! `~/.cache`), over stdio and over its streamable HTTP mode, through the scripted model.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, GatewayBuilder};

use crate::common::{chat, config_for, get_json, BIN, WAIT};
use crate::tools_support::call;

/// The installed server, or `None` (said loudly) when npm itself is missing.
fn everything() -> Option<PathBuf> {
    let dir = std::env::var_os("SWITCHBOARD_MCP_EVERYTHING_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/switchboard-tests/mcp-everything")
        });
    let bin = dir.join("node_modules/.bin/mcp-server-everything");
    if bin.exists() {
        return Some(bin);
    }
    // Under CI=true a missing npm fails the test; elsewhere it is skipped, loudly.
    if !switchboard_testkit::harness::require(&["npm"], "it installs the MCP 'everything' server") {
        return None;
    }
    panic!(
        "{} is missing: run tests/setup.sh to install @modelcontextprotocol/server-everything",
        bin.display()
    );
}

async fn wait_ready(gw: &Gateway, name: &str) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let all = get_json(gw, "/api/mcp").await;
        let s = all["servers"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == name).cloned())
            .unwrap_or(Value::Null);
        if s["state"] == "ready" {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} never got ready: {s}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Catches: the client failing against the reference server (handshake, tool names with
/// `-`, arguments, text and image results), or that server getting the daemon's secrets.
#[tokio::test]
async fn the_reference_everything_server_over_stdio() {
    let Some(bin) = everything() else { return };
    let fake = FakeModel::start().await.unwrap();
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"everything": {"command": bin}}}}),
        ))
        .env("OPENAI_API_KEY", "sk-daemon-secret-key")
        .start()
        .await
        .unwrap();
    let s = wait_ready(&gw, "everything").await;
    let tools = s["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("mcp__everything__get-sum")), "{s}");
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "x1",
        "mcp__everything__echo",
        r#"{"message": "hi"}"#,
    )
    .await;
    assert_eq!(r, "Echo: hi");
    let r = call(
        &fake,
        &mut ws,
        "x2",
        "mcp__everything__get-sum",
        r#"{"a": 5, "b": 3}"#,
    )
    .await;
    assert_eq!(r, "The sum of 5 and 3 is 8.");
    let r = call(
        &fake,
        &mut ws,
        "x3",
        "mcp__everything__get-tiny-image",
        "{}",
    )
    .await;
    assert!(r.contains("[image: image/png, "), "{r}");
    let r = call(&fake, &mut ws, "x4", "mcp__everything__get-env", "{}").await;
    assert!(r.contains("PATH"), "{r}");
    assert!(!r.contains("sk-daemon-secret-key"), "{r}");
    assert!(!r.contains("test-key"), "{r}");
}

/// The same server in its streamable HTTP mode. Catches: the HTTP client transport
/// working only against our own server.
#[tokio::test]
async fn the_reference_everything_server_over_streamable_http() {
    let Some(bin) = everything() else { return };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let _server = tokio::process::Command::new(bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..400 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(up, "the everything server never listened on {port}");
    let fake = FakeModel::start().await.unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(
            &fake,
            json!({"mcp": {"servers": {"everything": {"url": url}}}}),
        ))
        .start()
        .await
        .unwrap();
    let s = wait_ready(&gw, "everything").await;
    assert_eq!(s["transport"], "http");
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "y1",
        "mcp__everything__echo",
        r#"{"message": "over http"}"#,
    )
    .await;
    assert_eq!(r, "Echo: over http");
}
