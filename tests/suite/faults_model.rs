//! The model endpoint failing in every way a server can: 500s, 429 with small and absurd
//! Retry-After values, hangs past the step timeout, truncated, garbled and endless SSE,
//! invalid tool-call JSON. Every run ends within its timeouts with a `⚠️` notice in its
//! chat (or recovers), `wait: true` callers get an answer, and the gateway keeps serving.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{chat, get_text, start, WAIT};

/// Three-second steps, one retry, a whole-run bound: every fault below ends in seconds.
fn faults_config() -> Value {
    json!({
        "models": {"providers": {"fake": {"maxRetries": 1}}},
        "agents": {"defaults": {"stepTimeoutSeconds": 3, "timeout": "30s", "maxConcurrent": 16}},
    })
}

fn status(code: u16, retry_after: Option<u64>, message: &str) -> Step {
    Step::Status {
        code,
        retry_after,
        body: json!({"error": {"message": message}}).to_string(),
    }
}

/// Sends `text` in its own web chat and returns the first message answered there.
async fn answer(gw: &Gateway, chat_id: &str, text: &str) -> String {
    let mut ws = chat(gw, chat_id).await;
    ws.send_text(text).await.unwrap();
    ws.next_message(WAIT)
        .await
        .unwrap_or_else(|e| panic!("no answer to {text:?} in {WAIT:?}: {e:#}"))
}

/// Catches: any model failure that wedges a run (stays `running`, the chat never hears
/// of it) — notably a panic on `Retry-After: 1e20` — or takes the gateway down.
#[tokio::test]
async fn every_model_failure_ends_its_run_with_a_notice_and_the_gateway_keeps_serving() {
    let fake = FakeModel::start().await.unwrap();
    // Each fault answers every attempt (the first and its one retry) of its own chat.
    for _ in 0..2 {
        fake.push_for("fault500", status(500, None, "boom"));
        fake.push_for("faulthang", Step::Hang);
        fake.push_for("faultcut", Step::truncated_text(&["par", "tial"]));
    }
    fake.push_for("faultslow", status(429, Some(1), "busy"));
    fake.push_for("faultslow", Step::text("answered after the wait"));
    fake.push_for("faultabsurd", Step::rate_limited("1e20"));
    fake.push_for("faultapi", Step::rate_limited("100000000000000000000"));
    fake.push_for(
        "faultdate",
        Step::rate_limited("Fri, 31 Dec 9999 23:59:59 GMT"),
    );
    fake.push_for(
        "faultgarbage",
        Step::RawSse(vec!["data: {\"choices\": [oops\n\n".into()]),
    );
    fake.push_for(
        "faultframing",
        Step::RawSse(vec!["\r\r\r: \u{0}\u{7f}\n\nevent: x\ndata".into()]),
    );
    fake.push_for(
        "faultjson",
        Step::tool_call("sessions_list", "{\"limit\": "),
    );
    fake.push_for("faultjson", Step::text("recovered from bad JSON"));
    let gw = start(&fake, faults_config()).await;
    let started = Instant::now();

    let api = async {
        let r = gw
            .http()
            .post(format!(
                "{}/api/sessions/agent:main:faultapi/messages",
                gw.base_url()
            ))
            .json(&json!({"text": "faultapi", "wait": true, "timeoutSeconds": 25}))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    };
    let ((api_status, api_body), e500, hang, cut, slow, absurd, date, garbage, framing, json_fixed) = tokio::join!(
        api,
        answer(&gw, "c500", "fault500"),
        answer(&gw, "chang", "faulthang"),
        answer(&gw, "ccut", "faultcut"),
        answer(&gw, "cslow", "faultslow"),
        answer(&gw, "cabsurd", "faultabsurd"),
        answer(&gw, "cdate", "faultdate"),
        answer(&gw, "cgarbage", "faultgarbage"),
        answer(&gw, "cframing", "faultframing"),
        answer(&gw, "cjson", "faultjson"),
    );
    let failed = "⚠️ The model call failed: ";
    assert_eq!(
        e500,
        format!("{failed}model API server error (HTTP 500): boom")
    );
    assert_eq!(hang, format!("{failed}model API call timed out after 3s"));
    assert!(
        cut.starts_with(&format!("{failed}the model API's answer was cut off")),
        "{cut}"
    );
    assert_eq!(slow, "answered after the wait");
    let refused = format!("{failed}rate limited by the model API (HTTP 429): slow down");
    assert_eq!(absurd, refused);
    assert_eq!(date, refused);
    assert!(
        garbage.starts_with(&format!(
            "{failed}model API returned an invalid response: bad stream chunk"
        )),
        "{garbage}"
    );
    assert!(framing.starts_with(failed), "{framing}");
    assert_eq!(json_fixed, "recovered from bad JSON");
    assert_eq!(api_status, 200, "{api_body}");
    assert_eq!(api_body["status"], "failed", "{api_body}");
    assert_eq!(
        api_body["error"],
        "rate limited by the model API (HTTP 429): slow down"
    );
    // An absurd Retry-After is not slept on: sleeping on even the retry loop's 60 s cap
    // for the three absurd answers would take minutes. (A generous bound, not a figure:
    // hangs end by the step timeout, two attempts of 3 s, which a loaded machine stretches.)
    assert!(
        started.elapsed() < Duration::from_secs(150),
        "{:?}",
        started.elapsed()
    );
    assert!(
        fake.dropped() >= 2,
        "both hung attempts were dropped by the client"
    );

    // Still serving: health, and a normal turn.
    let health = gw
        .http()
        .get(format!("{}/healthz", gw.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(answer(&gw, "after", "all good?").await, "echo: all good?");
    // No run is left behind as active (a wedged run stays so forever).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let metrics = get_text(&gw, "/metrics").await;
        if metrics.lines().any(|l| l == "switchboard_active_runs 0") {
            break;
        }
        assert!(Instant::now() < deadline, "runs still active:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`, bounded; else 100).
async fn clock_ticks() -> u64 {
    let mut cmd = tokio::process::Command::new("getconf");
    cmd.arg("CLK_TCK");
    switchboard_testkit::harness::output_within(&mut cmd, WAIT)
        .await
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(100)
}

/// User + system CPU time the process `pid` has used so far.
fn cpu_time(pid: u32, ticks: u64) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().unwrap())
        .collect();
    Duration::from_millis((fields[0] + fields[1]) * 1000 / ticks)
}

/// Catches: an SSE stream with no event separator buffered without bound and rescanned on
/// every chunk (24 MiB cost 25 s of CPU against a 3 s step timeout).
#[tokio::test]
async fn an_endless_sse_event_ends_the_run_at_once_and_costs_little_cpu() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("flood", Step::Flood(24 * 1024 * 1024));
    let gw = start(&fake, faults_config()).await;
    let pid = gw.pid().unwrap();
    let ticks = clock_ticks().await;
    let before = cpu_time(pid, ticks);
    let reply = answer(&gw, "main", "flood please").await;
    let used = cpu_time(pid, ticks).saturating_sub(before);
    assert_eq!(
        reply,
        "⚠️ The model call failed: model API returned an invalid response: an event of the answer stream is larger than 1048576 bytes (no blank line ends it)"
    );
    // CPU time, not wall time (other load does not count): reading 1 MiB of an event is
    // milliseconds; rescanning a growing buffer was seconds per MiB. A generous bound.
    assert!(
        used < Duration::from_secs(5),
        "the daemon used {used:?} of CPU"
    );
    assert_eq!(answer(&gw, "next", "and now?").await, "echo: and now?");
}
