//! The HTTP server's middleware (`gateway.http`): a full server sheds a request at once
//! with 503 and `Retry-After`, never queueing it; a request not answered within the
//! timeout gets 408; a `wait: true` message post may wait past that timeout; a connection
//! idle past `idleTimeout`, or sending its headers slower, is closed, a WebSocket is not;
//! past `maxConnections`, a connection waits until one closes.

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
    let answer = exchange(&mut tcp, &head).await;
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

/// Write `request` on `tcp`; what the server answers in one read (bounded by `WAIT`).
async fn exchange(tcp: &mut TcpStream, request: &str) -> String {
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(WAIT, tcp.read(&mut answer))
        .await
        .expect("answered in time")
        .unwrap();
    String::from_utf8_lossy(&answer[..n]).to_string()
}

/// `GET /healthz` on `tcp`, kept alive: the answer's status line.
async fn healthz_on(tcp: &mut TcpStream, addr: &str) -> String {
    let answer = exchange(
        tcp,
        &format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
    )
    .await;
    answer.lines().next().unwrap_or("").to_string()
}

/// Whether the server closed `tcp` within `WAIT` (end of file or a reset), reading
/// nothing else meanwhile.
async fn closed_by_server(tcp: &mut TcpStream) -> bool {
    let mut rest = vec![0u8; 4096];
    match tokio::time::timeout(WAIT, tcp.read(&mut rest)).await {
        Ok(Ok(0)) | Ok(Err(_)) => true,
        Ok(Ok(_)) | Err(_) => false,
    }
}

/// Catches: kept-alive connections held for as long as their clients like (each keeps
/// its buffers; a hundred idle clients held megabytes for ever): with `idleTimeout` 1s,
/// a connection still serves a second request right after the first, and is closed by
/// the server once nothing came for the timeout.
#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"gateway": {"http": {"idleTimeout": "1s"}}})).await;
    let addr = gw.base_url().trim_start_matches("http://").to_string();
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    assert_eq!(healthz_on(&mut tcp, &addr).await, "HTTP/1.1 200 OK");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        healthz_on(&mut tcp, &addr).await,
        "HTTP/1.1 200 OK",
        "kept alive between requests"
    );
    assert!(closed_by_server(&mut tcp).await, "closed once idle");
}

/// The attack: clients that open connections and send their headers a byte at a time
/// (slowloris) to hold the server's connections for ever. Each is closed once its headers
/// took longer than `idleTimeout`, though it never stopped sending, and the daemon serves
/// everyone else meanwhile.
#[tokio::test]
async fn headers_sent_a_byte_at_a_time_cannot_hold_a_connection() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"gateway": {"http": {"idleTimeout": "1s"}}})).await;
    let addr = gw.base_url().trim_start_matches("http://").to_string();
    let mut slow = Vec::new();
    for _ in 0..20 {
        let addr = addr.clone();
        slow.push(tokio::spawn(async move {
            let mut tcp = TcpStream::connect(&addr).await.unwrap();
            let head = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ");
            tcp.write_all(head.as_bytes()).await.unwrap();
            let started = std::time::Instant::now();
            // One byte every 100 ms, never ending the headers, until the server hangs up.
            while started.elapsed() < WAIT {
                if tcp.write_all(b"a").await.is_err() {
                    return true;
                }
                let mut buf = [0u8; 256];
                match tokio::time::timeout(Duration::from_millis(100), tcp.read(&mut buf)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => return true,
                    Ok(Ok(_)) | Err(_) => {}
                }
            }
            false
        }));
    }
    assert_eq!(
        crate::common::get_text(&gw, "/healthz").await,
        "ok",
        "served while the slow clients send"
    );
    for client in slow {
        assert!(client.await.unwrap(), "a slow client was hung up on");
    }
}

/// Catches: the idle timeout applied to a WebSocket (an upgraded connection is the web
/// chat's, quiet between messages): a socket quiet for twice the timeout still chats.
#[tokio::test]
async fn a_quiet_web_chat_socket_outlives_the_idle_timeout() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("still there?", Step::Text("yes".into()));
    let gw = start(&fake, json!({"gateway": {"http": {"idleTimeout": "1s"}}})).await;
    let mut ws = crate::common::chat(&gw, "main").await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    ws.send_text("still there?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "yes");
}

/// The attack: a flood of connections opened and left (each a task, buffers and a file
/// descriptor in the daemon). With `maxConnections` 2, two idle connections fill the
/// server; a third is not served while they stay open, and is served as soon as one of
/// them closes.
#[tokio::test]
async fn connections_past_the_limit_wait_until_one_closes() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"gateway": {"http": {"maxConnections": 2, "idleTimeout": "60s"}}}),
    )
    .await;
    let addr = gw.base_url().trim_start_matches("http://").to_string();
    let mut first = TcpStream::connect(&addr).await.unwrap();
    assert_eq!(healthz_on(&mut first, &addr).await, "HTTP/1.1 200 OK");
    let second = TcpStream::connect(&addr).await.unwrap();
    // The OS completes the third connection's handshake; the daemon does not take it.
    let mut third = TcpStream::connect(&addr).await.unwrap();
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    third.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let early = tokio::time::timeout(Duration::from_secs(1), third.read(&mut answer)).await;
    assert!(early.is_err(), "served past the limit: {early:?}");
    drop(second);
    let n = tokio::time::timeout(WAIT, third.read(&mut answer))
        .await
        .expect("served once a connection closed")
        .unwrap();
    assert!(
        String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer[..n])
    );
    drop(first);
}
