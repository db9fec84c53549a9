//! Bad input from every side gets a clear error and the daemon keeps serving.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};

use crate::common::{chat, start, WAIT};

#[tokio::test]
async fn malformed_websocket_frames_get_an_error_frame() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_raw("{this is not json").await.unwrap();
    let err = ws.next_of_type("error", WAIT).await.unwrap();
    assert!(
        err["error"].as_str().unwrap().starts_with("invalid frame:"),
        "{err}"
    );
    ws.send_raw(r#"{"type":"message","text":""}"#)
        .await
        .unwrap();
    assert_eq!(
        ws.next_of_type("error", WAIT).await.unwrap()["error"],
        "empty message"
    );
    ws.send_raw(r#"{"type":"launch","text":"x"}"#)
        .await
        .unwrap();
    ws.next_of_type("error", WAIT).await.unwrap();
    // Still serving on the same socket.
    ws.send_text("still ok?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: still ok?");
}

/// A frame past the 64 KiB limit closes that socket (a close or a reset, not silence), no
/// message of it reaches the model, and other sockets go on. (Catches: the frame limit
/// removed — the 200 kB message would be taken and answered —, or an oversized frame
/// leaving the socket open and silent, which the old `next_frame(..).is_err()` accepted.)
#[tokio::test]
async fn an_oversized_frame_closes_only_that_socket() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    let huge = format!(r#"{{"type":"message","text":"{}"}}"#, "x".repeat(200_000));
    let _ = ws.send_raw(&huge).await;
    ws.closed(WAIT).await.expect("the socket is closed");
    assert_eq!(
        fake.request_count(),
        0,
        "the oversized message was not taken"
    );
    let mut ws2 = chat(&gw, "main").await;
    ws2.send_text("after").await.unwrap();
    assert_eq!(ws2.next_message(WAIT).await.unwrap(), "echo: after");
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn invalid_json_and_huge_bodies_are_refused_by_the_api() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"gateway": {"maxBodyBytes": 4096}})).await;
    let url = format!("{}/api/sessions/agent:main:main/messages", gw.base_url());
    let http = gw.http();
    let r = http
        .post(&url)
        .header("content-type", "application/json")
        .body("{nope")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON body"),
        "{body}"
    );
    let r = http
        .post(&url)
        .json(&json!({"txt": "typo"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 422);
    let r = http
        .post(&url)
        .json(&json!({"text": "x".repeat(10_000)}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let r = http
        .post(format!("{}/api/sessions/notakey/messages", gw.base_url()))
        .json(&json!({"text": "hi"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = http
        .post(&url)
        .json(&json!({"text": "fine", "wait": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["reply"], "echo: fine");
}

#[tokio::test]
async fn garbage_from_the_model_is_reported_to_the_chat() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("garbage", Step::Garbage("data: {not json}\n\n".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("garbage please").await.unwrap();
    let reply = ws.next_message(WAIT).await.unwrap();
    assert!(
        reply.starts_with("⚠️ The model call failed: model API returned an invalid response"),
        "{reply}"
    );
    ws.send_text("and now?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: and now?");
}

#[tokio::test]
async fn invalid_tool_arguments_and_unknown_tools_are_told_to_the_model() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "tools",
        Step::ToolCalls(vec![
            ToolCall::new("sessions_list", "{broken json"),
            ToolCall::new("rm_rf", "{}"),
        ]),
    );
    fake.push_for("tools", Step::Text("recovered".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("use tools").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "recovered");
    let second = &fake.requests()[1].body;
    let results: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        results[0].starts_with("error: the arguments of `sessions_list` are not valid JSON"),
        "{}",
        results[0]
    );
    assert!(results[1].starts_with("error: unknown tool `rm_rf`; available tools: agents_list, cron, edit, exec, glob, grep, ls, message, process, read, sessions_history, sessions_list, sessions_send, sessions_spawn, subagents, task, web_fetch, write"), "{}", results[1]);
    // The fake flags the history's call to the never-offered `rm_rf`: that is the scripted
    // model misbehaving, which is what this test is about. Nothing else may be flagged.
    let v = fake.violations();
    assert!(
        v.len() == 1 && v[0].contains("\"rm_rf\", which is not an offered tool"),
        "{v:?}"
    );
}

/// Catches: `sessions_spawn {runTimeoutSeconds: 10000000000000000}` wrapping to a negative
/// timeout (the child ended at once with `Status: timeout`) and wrongly typed arguments
/// read as "missing": both are tool errors the model is told, and nothing is spawned.
#[tokio::test]
async fn spawn_arguments_out_of_range_or_of_the_wrong_type_are_told_to_the_model() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "spawn huge",
        Step::ToolCalls(vec![
            crate::subagents::spawn_call(
                "count to three",
                json!({"runTimeoutSeconds": 10_000_000_000_000_000u64}),
            ),
            ToolCall::new("sessions_spawn", r#"{"task": 5}"#),
        ]),
    );
    fake.push_for("spawn huge", Step::Text("told".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("spawn huge please").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "told");
    let second = &fake.requests()[1].body;
    let results: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        results,
        [
            "error: `runTimeoutSeconds` must be a whole number from 0 to 604800 seconds (0 = no timeout), got 10000000000000000",
            "error: `task` must be a string, got a number",
        ]
    );
    let subagents = crate::common::get_json(&gw, "/api/subagents").await;
    assert_eq!(subagents["subagents"], json!([]), "nothing was spawned");
    fake.assert_no_violations();
}
