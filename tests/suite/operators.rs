//! Operators' tools end to end: the JSON log with each run's span fields, the latency
//! histograms of `/metrics` after a tool turn, and a model provider over HTTPS whose CA
//! only `SSL_CERT_FILE` names.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::tls_proxy::TlsProxy;

use crate::common::{chat, config_for, get_text, BIN, WAIT};

async fn start_with(fake: &FakeModel, patch: Value, env: &[(&str, &str)]) -> Gateway {
    let mut builder = GatewayBuilder::new(BIN).config(config_for(fake, patch));
    for (key, value) in env {
        builder = builder.env(*key, *value);
    }
    builder.start().await.unwrap()
}

/// Catches: a log line that is not one JSON object (text mixed in, two objects on a line),
/// and a run's lines without the run's span (session, run id, channel).
#[tokio::test]
async fn json_logs_are_one_object_per_line_with_the_runs_span_fields() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start_with(&fake, json!({}), &[("SWITCHBOARD_LOG_FORMAT", "json")]).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("log me").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: log me");
    gw.wait_for_log("\"run ended\"", WAIT).await.unwrap();

    let lines = gw.stderr_lines();
    let objects: Vec<Value> = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(objects.iter().all(Value::is_object));
    assert!(objects.len() > 3, "{lines:?}");
    let ended = objects
        .iter()
        .find(|o| o["message"] == "run ended")
        .unwrap_or_else(|| panic!("no run ended line in {lines:?}"));
    let span = &ended["span"];
    assert_eq!(span["name"], "run", "{ended}");
    assert_eq!(span["run"], ended["run_id"], "{ended}");
    assert_eq!(span["session"], ended["session"], "{ended}");
    assert_eq!(span["channel"], "webchat", "{ended}");
    assert!(
        ended["timestamp"].is_string() && ended["level"] == "INFO",
        "{ended}"
    );
}

/// The histogram `name` of `/metrics` text: its count for the series whose labels contain
/// `labels`.
fn count_of(metrics: &str, name: &str, labels: &str) -> u64 {
    metrics
        .lines()
        .find(|l| l.starts_with(&format!("{name}_count{{")) && l.contains(labels))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name}_count with {labels} in\n{metrics}"))
}

/// Catches: a turn, a tool call or a channel send not observed, a histogram without its
/// HELP and TYPE lines, and buckets that are not cumulative up to `+Inf`.
#[tokio::test]
async fn metrics_have_turn_tool_and_send_latency_histograms_after_a_tool_turn() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "look around",
        Step::tool_call("read", r#"{"path": "nope.txt"}"#),
    );
    fake.push_for("look around", Step::text("looked"));
    let gw = start_with(&fake, json!({}), &[]).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("look around").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "looked");
    crate::common::wait_outbox_sent(&gw, 1).await;

    let metrics = get_text(&gw, "/metrics").await;
    for name in [
        "switchboard_turn_seconds",
        "switchboard_tool_call_seconds",
        "switchboard_channel_send_seconds",
        "switchboard_model_call_seconds",
    ] {
        assert!(
            metrics.contains(&format!("# HELP {name} ")),
            "no HELP for {name}"
        );
        assert!(
            metrics
                .lines()
                .any(|l| l == format!("# TYPE {name} histogram")),
            "no TYPE for {name}"
        );
    }
    assert_eq!(
        count_of(&metrics, "switchboard_tool_call_seconds", "tool=\"read\""),
        1
    );
    assert!(count_of(&metrics, "switchboard_turn_seconds", "lane=\"main\"") >= 1);
    let sends = count_of(
        &metrics,
        "switchboard_channel_send_seconds",
        "channel=\"webchat\",outcome=\"ok\"",
    );
    assert!(sends >= 1);
    let inf = format!(
        "switchboard_channel_send_seconds_bucket{{channel=\"webchat\",outcome=\"ok\",le=\"+Inf\"}} {sends}"
    );
    assert!(metrics.lines().any(|l| l == inf), "missing {inf}");
}

/// A config whose provider is reached over HTTPS through `proxy`, without retries.
fn over_https(proxy: &TlsProxy) -> Value {
    json!({"models": {"providers": {"fake": {
        "baseUrl": format!("{}/v1", proxy.origin()),
        "maxRetries": 0
    }}}})
}

/// Catches: a private CA in SSL_CERT_FILE not trusted by the providers' client, and,
/// without it, a refused certificate reported without its cause or the way to fix it.
#[tokio::test]
async fn a_provider_over_https_is_trusted_through_ssl_cert_file() {
    let fake = FakeModel::start().await.unwrap();
    let proxy = TlsProxy::start(fake.addr()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, proxy.ca_pem()).unwrap();
    let ca = ca.to_str().unwrap();

    let gw = start_with(&fake, over_https(&proxy), &[("SSL_CERT_FILE", ca)]).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("over tls").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: over tls");
    assert_eq!(proxy.refused(), 0);
    drop(ws);
    drop(gw);

    let gw = start_with(&fake, over_https(&proxy), &[]).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("over tls again").await.unwrap();
    let failed = ws.next_message(WAIT).await.unwrap();
    assert!(failed.starts_with("⚠️ The model call failed: "), "{failed}");
    assert!(failed.contains("certificate"), "{failed}");
    assert!(failed.contains("SSL_CERT_FILE"), "{failed}");
    assert!(proxy.refused() >= 1);
    assert_eq!(fake.requests_containing("over tls again"), 0);
}
