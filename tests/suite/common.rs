//! Shared fixtures: a gateway wired to a fake model.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{self, Gateway, GatewayBuilder, WsClient};

pub const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
pub const WAIT: Duration = Duration::from_secs(20);

/// `switchboard` (no arguments yet) with the harness's scrubbed environment, `HOME` and
/// `SWITCHBOARD_STATE_DIR` for `state_dir`: every CLI call of the suite goes through this
/// or [`Gateway::command`].
pub fn cli(state_dir: &Path) -> tokio::process::Command {
    harness::command(BIN, state_dir)
}

/// Runs `cmd` to completion, bounded by [`WAIT`]; its output.
pub async fn output(cmd: &mut tokio::process::Command) -> Output {
    harness::output_within(cmd, WAIT).await.unwrap()
}

/// Deep-merge `patch` into `base`.
pub fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// A config that points the default agent at the fake model, with `patch` merged in.
pub fn config_for(fake: &FakeModel, patch: Value) -> String {
    let mut cfg = json!({
        "gateway": {"port": 0, "shutdownGrace": "2s"},
        "models": {"providers": {"fake": {
            "api": "openai-chat",
            "baseUrl": fake.base_url(),
            "apiKey": "test-key",
            "maxRetries": 3,
            "models": [{"id": "scripted", "cost": {"input": 1.0, "output": 2.0}}]
        }}},
        "agents": {"defaults": {"model": "fake/scripted", "stepTimeoutSeconds": 30}}
    });
    merge(&mut cfg, &patch);
    serde_json::to_string_pretty(&cfg).unwrap()
}

pub async fn start(fake: &FakeModel, patch: Value) -> Gateway {
    GatewayBuilder::new(BIN)
        .config(config_for(fake, patch))
        .start()
        .await
        .unwrap()
}

pub async fn chat(gw: &Gateway, chat: &str) -> WsClient {
    let mut ws = WsClient::connect(&gw.ws_url(chat)).await.unwrap();
    ws.next_of_type("hello", WAIT).await.unwrap();
    ws
}

/// `POST {base}{path}` with a JSON `body`: the status and the JSON answer.
pub async fn post_json(gw: &Gateway, path: &str, body: Value) -> (u16, Value) {
    let r = gw
        .http()
        .post(format!("{}{path}", gw.base_url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

/// `GET {base}{path}` as JSON.
pub async fn get_json(gw: &Gateway, path: &str) -> Value {
    gw.http()
        .get(format!("{}{path}", gw.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// GET `path` on the gateway; the body as text (`/metrics`, JSONL transcripts).
pub async fn get_text(gw: &Gateway, path: &str) -> String {
    gw.http()
        .get(format!("{}{path}", gw.base_url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// The number of outbox rows recorded as sent, from `/metrics`.
async fn outbox_sent(gw: &Gateway) -> u64 {
    let text = get_text(gw, "/metrics").await;
    text.lines()
        .find_map(|l| l.strip_prefix("switchboard_outbox_messages{state=\"sent\"} "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Wait (bounded) until the outbox has recorded at least `n` messages as sent. Tests that
/// kill the daemon wait for this: a kill between a channel accepting a message and that
/// commit is the one documented at-least-once window, not what they test.
pub async fn wait_outbox_sent(gw: &Gateway, n: u64) {
    for _ in 0..400 {
        if outbox_sent(gw).await >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the outbox never recorded {n} messages as sent");
}

/// A command's answer and `n` announces, which may arrive in any order.
pub async fn answer_and_announces(ws: &mut WsClient, n: usize) -> (String, Vec<String>) {
    let mut answer = None;
    let mut announces = Vec::new();
    while answer.is_none() || announces.len() < n {
        let m = ws.next_message(WAIT).await.unwrap();
        if m.starts_with("Status:") {
            announces.push(m);
        } else {
            answer = Some(m);
        }
    }
    (answer.unwrap_or_default(), announces)
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

/// `gw`, launched as a standby, has printed no ready line and listens on nothing at `port`.
pub async fn assert_standing_by(gw: &mut Gateway, port: u16) {
    assert!(!gw.is_ready(), "a standby prints no ready line");
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err(),
        "a standby binds nothing"
    );
}
