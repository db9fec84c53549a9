//! What the tool tests share: driving one tool call through the scripted model and
//! reading the result the gateway sent back to it in the next request.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::{Gateway, WsClient};

use crate::common::WAIT;

/// The default agent's workspace.
pub fn workspace(gw: &Gateway) -> PathBuf {
    gw.state_dir().join("workspace")
}

/// Script: for a message containing `trigger` the model calls `name(args)`, then answers
/// `"done <trigger>"`.
pub fn script(fake: &FakeModel, trigger: &str, name: &str, args: &str) {
    fake.push_for(trigger, Step::ToolCalls(vec![ToolCall::new(name, args)]));
    fake.push_for(trigger, Step::text(format!("done {trigger}")));
}

/// Send `trigger` (scripted with [`script`]) and wait for the final answer; returns the
/// tool result the model got.
pub async fn run(fake: &FakeModel, ws: &mut WsClient, trigger: &str) -> String {
    ws.send_text(trigger).await.unwrap();
    wait_done(ws, trigger, WAIT).await;
    tool_result(fake, trigger)
}

/// One tool call end to end: script it, send it, return its result.
pub async fn call(
    fake: &FakeModel,
    ws: &mut WsClient,
    trigger: &str,
    name: &str,
    args: &str,
) -> String {
    script(fake, trigger, name, args);
    run(fake, ws, trigger).await
}

/// Wait for the `done <trigger>` answer, skipping other messages.
pub async fn wait_done(ws: &mut WsClient, trigger: &str, timeout: Duration) {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let m = ws
            .next_message(left)
            .await
            .unwrap_or_else(|e| panic!("waiting for `done {trigger}`: {e:#}"));
        if m == format!("done {trigger}") {
            return;
        }
    }
}

/// The last tool result in a request to the model whose conversation holds `trigger`.
pub fn tool_result(fake: &FakeModel, trigger: &str) -> String {
    for r in fake.requests().iter().rev() {
        let Some(msgs) = r.body["messages"].as_array() else {
            continue;
        };
        let has_trigger = msgs.iter().any(|m| {
            m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.contains(trigger))
        });
        if !has_trigger {
            continue;
        }
        if let Some(last) = msgs.iter().rev().find(|m| m["role"] == "tool") {
            return last["content"].as_str().unwrap_or_default().to_string();
        }
    }
    panic!("no tool result for {trigger:?} in the model's requests")
}

/// A tool result that is JSON, parsed.
pub fn json(result: &str) -> Value {
    serde_json::from_str(result).unwrap_or_else(|e| {
        let shown: String = result.chars().take(500).collect();
        panic!("not JSON ({e}): {shown}…")
    })
}

/// Wait (bounded) until `pid` is gone.
pub async fn wait_gone(pid: u32) {
    for _ in 0..200 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("process {pid} is still alive");
}

/// Wait (bounded) until `pid` has died: gone, or a zombie (an orphan whose daemon was
/// SIGKILLed is its reaper's to collect, which may not be ours).
pub async fn wait_dead(pid: u32) {
    for _ in 0..200 {
        // The state is the field after the command name, which is in parentheses.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let dead = state.as_deref().is_none_or(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X']))
        });
        if dead {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("process {pid} is still alive");
}

/// Wait (bounded) until `path` exists and holds a number.
pub async fn wait_pid_file(path: &std::path::Path) -> u32 {
    for _ in 0..400 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} never held a pid", path.display());
}
