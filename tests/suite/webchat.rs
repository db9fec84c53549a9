//! Web chat end to end: message → reply, tool calls, `/stop`, retries, commands.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};

use crate::common::{chat, start, WAIT};

/// A message gets the model's reply, in a frame carrying the outbox's idempotency key (a
/// client drops the one repeat a crash can cause by it). (Catches: the key left out.)
#[tokio::test]
async fn a_message_gets_the_model_reply() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("hello there").await.unwrap();
    let frame = ws.next_of_type("message", WAIT).await.unwrap();
    assert_eq!(frame["text"], "echo: hello there");
    assert!(
        frame["key"].as_str().is_some_and(|k| k.starts_with("run:")),
        "{frame}"
    );
    let req = &fake.requests()[0];
    assert_eq!(req.auth.as_deref(), Some("Bearer test-key"));
    assert_eq!(req.body["model"], "scripted");
    assert_eq!(req.body["stream"], true);
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_tool_call_round_trip_is_stored_message_by_message() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "which sessions",
        Step::ToolCalls(vec![ToolCall::new("sessions_list", "{\"limit\": 5}")]),
    );
    fake.push_for("which sessions", Step::Text("there is one session".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("which sessions exist?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "there is one session");

    let second = &fake.requests()[1].body;
    let tool_msg = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool_msg["content"]
            .as_str()
            .unwrap()
            .contains("agent:main:main"),
        "{tool_msg}"
    );
    fake.assert_no_violations();

    let body = crate::common::get_text(&gw, "/api/sessions/agent:main:main/transcript").await;
    let roles: Vec<String> = body
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["role"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(roles, vec!["user", "assistant", "tool", "assistant"]);
}

#[tokio::test]
async fn stop_cancels_a_run_blocked_on_a_slow_model_and_drops_the_request() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("think hard", Step::Hang);
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("think hard about this").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    ws.send_text("/stop").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "Stopped 1 run.");
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    // The session keeps working.
    ws.send_text("are you there").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: are you there");
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after_then_succeeds() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "busy model",
        Step::Status {
            code: 429,
            retry_after: Some(1),
            body: "{\"error\":{\"message\":\"slow down\"}}".into(),
        },
    );
    fake.push_for(
        "busy model",
        Step::Status {
            code: 500,
            retry_after: None,
            body: "oops".into(),
        },
    );
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("busy model?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: busy model?");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs[1].at.duration_since(reqs[0].at) >= Duration::from_millis(950),
        "Retry-After honoured"
    );
    gw.wait_for_log("model call failed; retrying", WAIT)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_4xx_from_the_model_is_reported_without_retry() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "bad key",
        Step::Status {
            code: 401,
            retry_after: None,
            body: "{\"error\":{\"message\":\"invalid api key\"}}".into(),
        },
    );
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("bad key").await.unwrap();
    let reply = ws.next_message(WAIT).await.unwrap();
    assert_eq!(
        reply,
        "⚠️ The model call failed: model API request failed (HTTP 401): invalid api key"
    );
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn help_status_new_and_unknown_commands_answer() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("/help").await.unwrap();
    assert!(ws
        .next_message(WAIT)
        .await
        .unwrap()
        .starts_with("Commands:\n/help"));
    ws.send_text("/status").await.unwrap();
    let status = ws.next_message(WAIT).await.unwrap();
    assert!(
        status.contains("Model: fake/scripted")
            && status.contains("Lane main: 0 active / 4 max, 0 queued"),
        "{status}"
    );
    // Not a command of ours: an ordinary message for the agent.
    ws.send_text("/frobnicate now").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "echo: /frobnicate now"
    );
    ws.send_text("remember me").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: remember me");
    ws.send_text("/new").await.unwrap();
    assert!(ws
        .next_message(WAIT)
        .await
        .unwrap()
        .starts_with("Started a new session. The previous one"));
    ws.send_text("fresh start").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: fresh start");
    // The new session's request carries only the new message.
    let last = fake.requests().last().unwrap().body.clone();
    let users: Vec<&Value> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 1);
    // The archived session is still listed with its transcript.
    let list: Value = gw
        .http()
        .get(format!("{}/api/sessions?archived=true", gw.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let statuses: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.len(), 2);
    assert!(statuses.contains(&"archived") && statuses.contains(&"active"));
}

#[tokio::test]
async fn without_a_model_the_reply_says_how_to_configure_one() {
    let gw = switchboard_testkit::harness::GatewayBuilder::new(crate::common::BIN)
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("hi").await.unwrap();
    let reply = ws.next_message(WAIT).await.unwrap();
    assert!(
        reply.starts_with("No model is configured. Set OPENAI_API_KEY or ANTHROPIC_API_KEY"),
        "{reply}"
    );
    let health = gw
        .http()
        .get(format!("{}/healthz", gw.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

/// The reply frame reaches the socket before the `outbox.sent` event that reports it, and
/// the run's events are there. (Catches: `outbox.sent` emitted without the message frame,
/// or before it; the old `at("message") < at("outbox.sent")` compared `Option`s, and
/// `None < Some` let a missing frame pass.)
#[tokio::test]
async fn live_events_reach_the_socket_after_the_message_they_report() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("report on yourself").await.unwrap();
    let mut seen = Vec::new();
    loop {
        let frame = ws.next_frame(WAIT).await.unwrap();
        let label = match frame["type"].as_str() {
            Some("event") => frame["event"]["type"].as_str().unwrap_or("?").to_string(),
            Some("message") => "message".to_string(),
            _ => continue,
        };
        seen.push(label.clone());
        if label == "outbox.sent" {
            break;
        }
    }
    let at = |name: &str| {
        seen.iter()
            .position(|s| s == name)
            .unwrap_or_else(|| panic!("no {name} frame in {seen:?}"))
    };
    assert!(at("run.started") < at("run.ended"), "{seen:?}");
    assert!(at("message") < at("outbox.sent"), "{seen:?}");
    assert_eq!(
        seen.iter().filter(|s| *s == "message").count(),
        1,
        "{seen:?}"
    );
}
