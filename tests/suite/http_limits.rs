//! The HTTP server's middleware (`gateway.http`): a full server sheds a request at once
//! with 503 and `Retry-After`, never queueing it; a request not answered within the
//! timeout gets 408; a `wait: true` message post may wait past that timeout.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::{start, WAIT};

/// A scripted answer that takes `delay`.
fn slow(text: &str, delay: Duration) -> Step {
    Step::Delay(delay, Box::new(Step::Text(text.into())))
}

/// Catches: an HTTP server without a concurrency limit (or one that queues): with
/// `maxConcurrent` requests in flight, one more must be refused at once, 503 with
/// `Retry-After`, while health probes still pass and the server serves again after.
#[tokio::test]
async fn a_full_server_sheds_with_503_and_retry_after() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("slow one", slow("one done", Duration::from_secs(3)));
    fake.push_for("slow two", slow("two done", Duration::from_secs(3)));
    let gw = start(&fake, json!({"gateway": {"http": {"maxConcurrent": 2}}})).await;
    let (http, base) = (gw.http(), gw.base_url());
    let post = |session: &str, text: &str| {
        http.post(format!("{base}/api/sessions/agent:main:{session}/messages"))
            .json(&json!({"text": text, "wait": true}))
            .send()
    };
    let (one, two) = (post("a", "slow one"), post("b", "slow two"));
    let held = tokio::spawn(async move {
        let (one, two) = tokio::join!(one, two);
        (one.unwrap(), two.unwrap())
    });
    // Both posts are with the model now: each holds a slot until its run ends.
    fake.wait_for_requests(2, WAIT).await.unwrap();

    let shed = http
        .get(format!("{base}/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(shed.status(), 503);
    assert_eq!(
        shed.headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    let body: Value = shed.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap_or("")
            .contains("gateway.http.maxConcurrent"),
        "{body}"
    );
    let health = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200, "a probe is never shed");

    let (one, two) = tokio::time::timeout(WAIT, held).await.unwrap().unwrap();
    let one: Value = one.json().await.unwrap();
    let two: Value = two.json().await.unwrap();
    assert_eq!(
        (one["reply"].as_str(), two["reply"].as_str()),
        (Some("one done"), Some("two done"))
    );
    let again = http
        .get(format!("{base}/api/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200, "slots come back when requests end");
}

/// Catches: an HTTP server without a request timeout (a client that never sends the body
/// it announced held its connection and slot for ever), and a timeout that also cuts a
/// `wait: true` post short of the wait its caller asked for.
#[tokio::test]
async fn a_slow_request_times_out_but_a_waiting_post_does_not() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("think", slow("thought", Duration::from_millis(2500)));
    let gw = start(&fake, json!({"gateway": {"http": {"timeout": "1s"}}})).await;
    let base = gw.base_url();

    // A body announced and never sent (the webhook route reads its body).
    let addr = base.trim_start_matches("http://").to_string();
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /telegram/webhook HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"update_id\":"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(WAIT, tcp.read(&mut answer))
        .await
        .expect("answered in time")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_string();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("gateway.http.timeout"), "{answer}");

    // A wait for a run longer than the timeout: answered when the run ends.
    let r = gw
        .http()
        .post(format!("{base}/api/sessions/agent:main:main/messages"))
        .json(&json!({"text": "think", "wait": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["reply"], "thought");
}
