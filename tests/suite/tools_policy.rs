//! The tool policy end to end: what the model is offered under a profile and deny list,
//! the `run.tool` event with duration and outcome, and tool calls in `/subagents log … tools`.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};

use crate::common::{chat, start, WAIT};
use crate::tools_support::{call, script, wait_done};

fn offered(body: &Value) -> Vec<String> {
    let mut names: Vec<String> = body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `coding` minus `group:runtime` and `edit`: the model is offered exactly the rest, and
/// a call to a denied tool is refused as unknown. Catches: denied tools still offered.
#[tokio::test]
async fn the_model_is_offered_only_what_the_policy_allows() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"tools": {"profile": "coding", "deny": ["group:runtime", "edit"]}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    let r = call(&fake, &mut ws, "p1", "exec", r#"{"command": "true"}"#).await;
    assert!(
        r.starts_with(
            "error: unknown tool `exec`; available tools: agents_list, glob, grep, ls, read, sessions_history"
        ),
        "{r}"
    );
    let first = &fake.requests()[0].body;
    assert_eq!(
        offered(first),
        vec![
            "agents_list",
            "glob",
            "grep",
            "ls",
            "read",
            "sessions_history",
            "sessions_list",
            "sessions_send",
            "sessions_spawn",
            "subagents",
            "task",
            "write"
        ]
    );
}

/// `run.tool` reaches the chat's socket after the call, with its name, duration and
/// whether it failed. Catches: events without outcome or duration.
#[tokio::test]
async fn run_tool_events_carry_duration_and_outcome() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    script(&fake, "e1", "read", r#"{"path": "missing.txt"}"#);
    ws.send_text("e1").await.unwrap();
    let mut event = Value::Null;
    for _ in 0..50 {
        let f = ws.next_frame(WAIT).await.unwrap();
        if f["type"] == "event" && f["event"]["type"] == "run.tool" {
            event = f["event"].clone();
            break;
        }
    }
    assert_eq!(event["tool"], "read", "{event}");
    assert_eq!(event["ok"], false, "{event}");
    assert!(
        event["durationMs"].is_u64() && event["error"].as_str().unwrap().contains("no such file"),
        "{event}"
    );
    assert_eq!(event["sessionKey"], "agent:main:main");
    wait_done(&mut ws, "e1", WAIT).await;
}

/// A sub-agent's tool calls and results show in `/subagents log <#> tools`.
#[tokio::test]
async fn subagent_tool_calls_show_in_its_log() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    fake.push_for(
        "spawn",
        Step::ToolCalls(vec![ToolCall::new(
            "sessions_spawn",
            r#"{"task": "kid-task write"}"#,
        )]),
    );
    fake.push_for("spawn", Step::text("spawned"));
    fake.push_for(
        "kid-task",
        Step::ToolCalls(vec![ToolCall::new(
            "write",
            r#"{"path": "kid.txt", "content": "hi"}"#,
        )]),
    );
    fake.push_for("kid-task", Step::text("kid done"));
    ws.send_text("spawn").await.unwrap();
    let mut announced = false;
    for _ in 0..10 {
        if ws.next_message(WAIT).await.unwrap().starts_with("Status:") {
            announced = true;
            break;
        }
    }
    assert!(announced);
    ws.send_text("/subagents log 1 tools").await.unwrap();
    let log = ws.next_message(WAIT).await.unwrap();
    assert!(
        log.contains("→ write({\"path\": \"kid.txt\", \"content\": \"hi\"})"),
        "{log}"
    );
    assert!(
        log.contains("[tool write] wrote 2 bytes to kid.txt"),
        "{log}"
    );
}
