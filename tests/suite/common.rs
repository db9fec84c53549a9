//! Shared fixtures: a gateway wired to a fake model.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, GatewayBuilder, WsClient};

pub const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
pub const WAIT: Duration = Duration::from_secs(20);

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
