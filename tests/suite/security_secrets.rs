//! Secrets never shown (README, Security): `config print`, the API (`/api/status`,
//! `/api/mcp`, the control page) and the log hide every secret-bearing value — tokens,
//! keys, passwords in URLs, header values, the `env` of MCP servers and commands.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;

use crate::cli_config::run;
use crate::common::{cli, free_port, get_json, start, WAIT};

/// Secrets of every kind, each in its place in a config.
fn secret_config(dead_port: u16) -> Value {
    json!({
        "storage": {"url": "postgres://sb:db-pass-5150@127.0.0.1:1/sb?sslmode=disable"},
        "mcp": {"servers": {
            "remote": {
                "url": format!("http://127.0.0.1:{dead_port}/mcp?token=url-secret-4711"),
                "headers": {"Authorization": "Bearer header-secret-2323", "X-Tenant": "tenant-value-9898"},
                "timeout": "2s"
            },
            "local": {"command": "/nonexistent/mcp-server-x", "env": {"GITHUB_TOKEN": "env-secret-8080", "PLAIN": "plain-env-4242"}}
        }},
        "tools": {"exec": {"env": {"SERVICE_KEY": "exec-env-secret-3131"}}},
        "channels": {"telegram": {"botToken": "123456:tg-secret-7777"}}
    })
}

const SECRETS: &[&str] = &[
    "db-pass-5150",
    "url-secret-4711",
    "header-secret-2323",
    "tenant-value-9898",
    "env-secret-8080",
    "plain-env-4242",
    "exec-env-secret-3131",
    "tg-secret-7777",
];

fn assert_hidden(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} shows {s}: {text}");
    }
}

/// Catches: `config print` showing a database password, an MCP server's header values or
/// environment, a command's environment, or a URL's secret query value.
#[tokio::test]
async fn config_print_hides_every_secret_bearing_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json5");
    std::fs::write(&path, secret_config(free_port()).to_string()).unwrap();
    let (code, stdout, stderr) = run(cli(dir.path())
        .args(["config", "print", "--config"])
        .arg(&path))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_hidden("config print", &stdout);
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        printed["storage"]["url"], "postgres://sb:***@127.0.0.1:1/sb?sslmode=disable",
        "the URL keeps its shape"
    );
    let remote = &printed["mcp"]["servers"]["remote"];
    assert_eq!(remote["headers"]["Authorization"], "<redacted>", "{remote}");
    assert!(
        remote["url"].as_str().unwrap().ends_with("/mcp?token=***"),
        "{remote}"
    );
    assert_eq!(
        printed["mcp"]["servers"]["local"]["env"]["GITHUB_TOKEN"],
        "<redacted>"
    );
}

/// Catches: an MCP server's error (which quotes its URL) carried by `/api/mcp` or the log
/// with the URL's token, or any secret of the config reaching an API answer or a log line.
#[tokio::test]
async fn the_api_the_control_page_and_the_log_show_no_secret() {
    let fake = FakeModel::start().await.unwrap();
    let mut patch = secret_config(free_port());
    // The daemon runs on SQLite here; the rest of the secrets stay.
    patch.as_object_mut().unwrap().remove("storage");
    patch["channels"]["telegram"]["enabled"] = json!(false);
    let gw = start(&fake, patch).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    let mcp = loop {
        let all = get_json(&gw, "/api/mcp").await;
        let failed = all["servers"]
            .as_array()
            .is_some_and(|s| s.iter().all(|s| !s["lastError"].is_null()));
        if failed {
            break all;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no MCP error within {WAIT:?}: {all}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_hidden("/api/mcp", &mcp.to_string());
    assert_hidden(
        "/api/status",
        &get_json(&gw, "/api/status").await.to_string(),
    );
    let control = gw
        .http()
        .get(gw.page_url("/control"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_hidden("/control", &control);
    assert_hidden("the log", &gw.stderr_lines().join("\n"));
}
