//! The Anthropic Messages dialect, streamed: the SSE events of an answer (`message_start`,
//! content blocks with their deltas, `message_delta` with usage, `message_stop`), and the
//! extended-thinking checks: a thinking block is answered when the request enables
//! thinking, and must come back unchanged, first in the assistant message, with the tool
//! results it led to (as the real API demands).

use axum::body::Bytes;
use serde_json::{json, Value};

use super::wire::{self, Reply, Usage, STREAM_PIECES};

/// Anthropic's smallest accepted `budget_tokens`.
const MIN_BUDGET: u64 = 1024;

/// The thinking block's text for a request whose trigger is `user_text`.
fn thinking_text(user_text: &str) -> String {
    let head: String = user_text.chars().take(40).collect();
    format!("Considering: {head}")
}

/// The signature the fake gives `thinking` (FNV-1a): a block changed on its way back no
/// longer matches.
fn sign(thinking: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in thinking.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("sig-{hash:016x}")
}

/// Whether the request enables extended thinking.
pub(super) fn thinking_enabled(body: &Value) -> bool {
    body["thinking"]["type"] == "enabled"
}

/// The thinking checks of one request.
pub(super) fn check_thinking(body: &Value, problems: &mut Vec<String>) {
    let thinking = match body.get("thinking") {
        None | Some(Value::Null) => return,
        Some(t) => t,
    };
    match thinking["type"].as_str() {
        Some("disabled") => return,
        Some("enabled") => {}
        other => {
            problems.push(format!(
                "`thinking.type` must be \"enabled\" or \"disabled\", got {other:?}"
            ));
            return;
        }
    }
    let max_tokens = body["max_tokens"].as_u64().unwrap_or(0);
    match thinking["budget_tokens"].as_u64() {
        Some(b) if b < MIN_BUDGET => problems.push(format!(
            "`thinking.budget_tokens` is {b}; it must be at least {MIN_BUDGET}"
        )),
        Some(b) if b >= max_tokens => problems.push(format!(
            "`thinking.budget_tokens` ({b}) must be less than `max_tokens` ({max_tokens})"
        )),
        Some(_) => {}
        None => problems.push("`thinking.budget_tokens` is missing".to_owned()),
    }
    let Some(messages) = body["messages"].as_array() else {
        return;
    };
    let in_tool_loop = messages.last().is_some_and(|m| {
        m["content"]
            .as_array()
            .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"))
    });
    if !in_tool_loop {
        return;
    }
    let Some((i, assistant)) = messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m["role"] == "assistant")
    else {
        return;
    };
    let first = &assistant["content"][0];
    match first["type"].as_str() {
        Some("thinking") => {
            let text = first["thinking"].as_str().unwrap_or_default();
            if first["signature"].as_str() != Some(sign(text).as_str()) {
                problems.push(format!(
                    "messages[{i}].content[0]: the thinking block was changed (its signature does not match)"
                ));
            }
        }
        Some("redacted_thinking") => {}
        _ => problems.push(format!(
            "messages[{i}]: with thinking enabled, the assistant message before tool results must start with its thinking block"
        )),
    }
}

/// The thinking block of an answer, when the request enables thinking.
pub(super) fn thinking_block(body: &Value, user_text: &str) -> Option<Value> {
    thinking_enabled(body).then(|| {
        let text = thinking_text(user_text);
        json!({"type": "thinking", "thinking": text, "signature": sign(&text)})
    })
}

/// The SSE events of a streamed answer, each with its `event:` line.
pub(super) fn events(
    id: &str,
    model: &str,
    reply: &Reply,
    usage: Usage,
    thinking: Option<&Value>,
) -> Vec<Bytes> {
    let mut events = vec![json!({
        "type": "message_start",
        "message": {
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.prompt, "output_tokens": 1},
        },
    })];
    let mut index = 0;
    let mut block = |events: &mut Vec<Value>, start: Value, deltas: Vec<Value>| {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    };
    if let Some(t) = thinking {
        let text = t["thinking"].as_str().unwrap_or_default();
        let mut deltas: Vec<Value> = wire::split(text, STREAM_PIECES)
            .into_iter()
            .map(|piece| json!({"type": "thinking_delta", "thinking": piece}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": t["signature"]}));
        block(
            &mut events,
            json!({"type": "thinking", "thinking": ""}),
            deltas,
        );
    }
    let stop_reason = match reply {
        Reply::Text(text) => {
            let deltas = wire::split(text, STREAM_PIECES)
                .into_iter()
                .map(|piece| json!({"type": "text_delta", "text": piece}))
                .collect();
            block(&mut events, json!({"type": "text", "text": ""}), deltas);
            "end_turn"
        }
        Reply::ToolCalls(calls) => {
            for call in calls {
                let deltas = wire::split(&call.arguments, STREAM_PIECES)
                    .into_iter()
                    .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
                    .collect();
                block(
                    &mut events,
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                    deltas,
                );
            }
            "tool_use"
        }
    };
    events.push(json!({"type": "ping"}));
    events.push(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": usage.completion},
    }));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().unwrap_or_default();
            Bytes::from(format!("event: {kind}\ndata: {e}\n\n"))
        })
        .collect()
}
