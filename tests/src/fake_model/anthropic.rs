//! The Anthropic Messages dialect: request invariants, trigger text and non-streamed
//! answers (streamed ones: `anthropic_stream`).

use std::collections::HashSet;

use axum::http::HeaderMap;
use serde_json::{json, Value};

use super::wire::{self, Reply, Usage};

/// Headers every Anthropic request must carry.
const REQUIRED_HEADERS: [&str; 2] = ["x-api-key", "anthropic-version"];

/// The headers every request must carry.
pub(super) fn check_headers(headers: &HeaderMap) -> Vec<String> {
    let mut problems = Vec::new();
    for name in REQUIRED_HEADERS {
        let present = headers
            .get(name)
            .is_some_and(|value| !value.as_bytes().is_empty());
        if !present {
            problems.push(format!("header `{name}` is missing"));
        }
    }
    problems
}

/// Every invariant of one parsed body; each problem is a sentence naming what is wrong.
pub(super) fn check(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    wire::check_model_and_messages(body, &mut problems);
    if matches!(body["max_tokens"].as_u64(), None | Some(0)) {
        problems.push("`max_tokens` is missing or not a positive integer".to_owned());
    }
    super::anthropic_stream::check_thinking(body, &mut problems);
    let offered = offered_tools(body, &mut problems);
    if let Some(messages) = body["messages"].as_array() {
        check_messages(messages, offered.as_ref(), &mut problems);
    }
    problems
}

/// Role alternation and tool_use / tool_result pairing.
fn check_messages(
    messages: &[Value],
    offered: Option<&HashSet<String>>,
    problems: &mut Vec<String>,
) {
    let mut issued = HashSet::new();
    // tool_use ids of the previous message, which the next (user) message must answer.
    let mut expected: Vec<String> = Vec::new();
    let mut previous_role = None;
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role != "user" && role != "assistant" {
            problems.push(format!("messages[{i}] has unknown role {role:?}"));
        }
        if i == 0 && role != "user" {
            problems.push(format!(
                "messages[0] has role {role:?}; the first must be \"user\""
            ));
        }
        if previous_role == Some(role) {
            problems.push(format!(
                "messages[{i}] has the same role ({role}) as the one before; roles must alternate"
            ));
        }
        previous_role = Some(role);
        let blocks = match &message["content"] {
            Value::String(_) => &[][..],
            Value::Array(blocks) => blocks.as_slice(),
            _ => {
                problems.push(format!(
                    "messages[{i}].content is neither a string nor an array"
                ));
                &[][..]
            }
        };
        if role == "user" {
            check_results(i, blocks, &issued, &expected, problems);
        } else {
            if !expected.is_empty() {
                problems.push(format!(
                    "tool_use ids {expected:?} are not answered before messages[{i}]"
                ));
            }
            for (j, block) in blocks.iter().enumerate() {
                if block["type"] == "tool_result" {
                    problems.push(format!(
                        "messages[{i}].content[{j}]: tool_result in an assistant message"
                    ));
                }
            }
        }
        expected = if role == "assistant" {
            check_uses(i, blocks, offered, &mut issued, problems)
        } else {
            Vec::new()
        };
    }
    if !expected.is_empty() {
        problems.push(format!(
            "tool_use ids {expected:?} are never answered by a tool_result"
        ));
    }
}

/// tool_result blocks of user message `i`: each answers a tool_use of message `i - 1`, once,
/// and they come before any other content.
fn check_results(
    i: usize,
    blocks: &[Value],
    issued: &HashSet<String>,
    expected: &[String],
    problems: &mut Vec<String>,
) {
    let mut answered = HashSet::new();
    let mut other_content_seen = false;
    for (j, block) in blocks.iter().enumerate() {
        if block["type"] != "tool_result" {
            other_content_seen = true;
            continue;
        }
        let at = format!("messages[{i}].content[{j}]");
        if other_content_seen {
            problems.push(format!("{at}: tool_result comes after other content"));
        }
        let Some(id) = block["tool_use_id"].as_str() else {
            problems.push(format!("{at}: tool_result has no `tool_use_id`"));
            continue;
        };
        if expected.iter().any(|expected| expected == id) {
            if !answered.insert(id.to_owned()) {
                problems.push(format!("{at}: tool_use {id:?} is answered a second time"));
            }
        } else if issued.contains(id) {
            problems.push(format!(
                "{at}: tool_result for {id:?} is not in the user message right after its tool_use"
            ));
        } else {
            problems.push(format!(
                "{at}: tool_result answers {id:?}, which no earlier assistant message issued"
            ));
        }
    }
    let unanswered: Vec<&String> = expected
        .iter()
        .filter(|id| !answered.contains(*id))
        .collect();
    if !unanswered.is_empty() {
        problems.push(format!(
            "tool_use ids {unanswered:?} of messages[{}] are not answered in messages[{i}]",
            i.saturating_sub(1)
        ));
    }
}

/// tool_use blocks of assistant message `i`; returns their ids.
fn check_uses(
    i: usize,
    blocks: &[Value],
    offered: Option<&HashSet<String>>,
    issued: &mut HashSet<String>,
    problems: &mut Vec<String>,
) -> Vec<String> {
    let mut ids = Vec::new();
    for (j, block) in blocks.iter().enumerate() {
        if block["type"] != "tool_use" {
            continue;
        }
        let at = format!("messages[{i}].content[{j}]");
        match block["id"].as_str() {
            None | Some("") => problems.push(format!("{at}: tool_use has no `id`")),
            Some(id) if !issued.insert(id.to_owned()) => {
                problems.push(format!("{at}: tool_use reuses id {id:?}"));
            }
            Some(id) => ids.push(id.to_owned()),
        }
        match block["name"].as_str() {
            None | Some("") => problems.push(format!("{at}: tool_use has no `name`")),
            Some(name) => {
                if offered.is_some_and(|offered| !offered.contains(name)) {
                    problems.push(format!(
                        "{at}: tool_use calls {name:?}, which is not an offered tool"
                    ));
                }
            }
        }
        if !block["input"].is_object() {
            problems.push(format!("{at}: tool_use `input` is not an object"));
        }
    }
    ids
}

/// The names of the offered (custom) tools, when `tools` is present.
fn offered_tools(body: &Value, problems: &mut Vec<String>) -> Option<HashSet<String>> {
    let tools = match body.get("tools") {
        None | Some(Value::Null) => return None,
        Some(Value::Array(tools)) => tools,
        Some(_) => {
            problems.push("`tools` is not an array".to_owned());
            return None;
        }
    };
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        // Server tools (`web_search_…`) carry their own `type` and no schema.
        let custom = tool.get("type").is_none_or(|kind| kind == "custom");
        match tool["name"].as_str() {
            None | Some("") => problems.push(format!("tools[{i}] has no `name`")),
            Some(name) => {
                if !names.insert(name.to_owned()) {
                    problems.push(format!("tools[{i}] repeats the tool name {name:?}"));
                }
            }
        }
        if custom && !tool["input_schema"].is_object() {
            problems.push(format!("tools[{i}] has no object `input_schema`"));
        }
    }
    Some(names)
}

/// The text of the last user message that has text: a user message holding only tool results
/// is skipped, so a tool round trip keeps the original question as its trigger.
pub(super) fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .filter(|message| message["role"] == "user")
        .map(|message| wire::text_of(&message["content"]))
        .find(|text| !text.is_empty())
        .unwrap_or_default()
}

/// What the request's system prompt and messages weigh in prompt tokens.
pub(super) fn usage(body: &Value, reply: &Reply) -> Usage {
    Usage::new(&[&body["system"], &body["messages"]], reply)
}

/// A non-streamed `message`. Tool arguments that are not valid JSON are sent as a JSON string
/// `input`, so the client's handling of a broken tool call can be tested.
pub(super) fn message(
    id: &str,
    model: &str,
    reply: &Reply,
    usage: Usage,
    thinking: Option<Value>,
) -> Value {
    let (mut content, stop_reason): (Vec<Value>, _) = match reply {
        Reply::Text(text) => (vec![json!({"type": "text", "text": text})], "end_turn"),
        Reply::ToolCalls(calls) => {
            let blocks = calls
                .iter()
                .map(|call| {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
                })
                .collect();
            (blocks, "tool_use")
        }
    };
    if let Some(t) = thinking {
        content.insert(0, t);
    }
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": usage.prompt, "output_tokens": usage.completion},
    })
}
