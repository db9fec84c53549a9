//! The OpenAI chat completions dialect: request invariants, trigger text and answers
//! (one JSON object, or SSE chunks).

use std::collections::HashSet;

use bytes::Bytes;
use serde_json::{json, Value};

use super::wire::{self, Reply, Usage, CREATED, STREAM_PIECES};

/// Every invariant of one request; each problem is a sentence naming what is wrong.
pub(super) fn check(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    wire::check_model_and_messages(body, &mut problems);
    match body.get("reasoning_effort") {
        None | Some(Value::Null) => {}
        Some(effort) if ["low", "medium", "high"].iter().any(|e| effort == e) => {}
        Some(other) => problems.push(format!(
            "`reasoning_effort` must be \"low\", \"medium\" or \"high\", got {other}"
        )),
    }
    check_token_limit(body, &mut problems);
    let offered = offered_tools(body, &mut problems);
    let Some(messages) = body["messages"].as_array() else {
        return problems;
    };
    let mut history = History::default();
    for (i, message) in messages.iter().enumerate() {
        match message["role"].as_str().unwrap_or_default() {
            "assistant" => {
                history.close_pending(i, "assistant", &mut problems);
                check_tool_calls(i, message, offered.as_ref(), &mut history, &mut problems);
            }
            "tool" => history.answer(i, message, &mut problems),
            role @ ("user" | "system" | "developer") => {
                history.close_pending(i, role, &mut problems);
            }
            other => problems.push(format!("messages[{i}] has unknown role {other:?}")),
        }
    }
    if !history.pending.is_empty() {
        problems.push(format!(
            "tool calls {:?} are never answered by a tool message",
            history.pending
        ));
    }
    problems
}

/// Tool call ids seen so far in one request.
#[derive(Debug, Default)]
struct History {
    issued: HashSet<String>,
    answered: HashSet<String>,
    /// Issued by the latest assistant message and not answered yet.
    pending: Vec<String>,
}

impl History {
    fn close_pending(&mut self, i: usize, role: &str, problems: &mut Vec<String>) {
        if !self.pending.is_empty() {
            problems.push(format!(
                "tool calls {:?} are not answered before messages[{i}] ({role})",
                self.pending
            ));
            self.pending.clear();
        }
    }

    fn answer(&mut self, i: usize, message: &Value, problems: &mut Vec<String>) {
        let Some(id) = message["tool_call_id"].as_str() else {
            problems.push(format!("messages[{i}] (tool) has no `tool_call_id`"));
            return;
        };
        if !self.issued.contains(id) {
            problems.push(format!(
                "messages[{i}] (tool) answers tool_call_id {id:?}, which no earlier assistant message issued"
            ));
        } else if !self.answered.insert(id.to_owned()) {
            problems.push(format!(
                "messages[{i}] (tool) answers tool_call_id {id:?} a second time"
            ));
        } else if let Some(at) = self.pending.iter().position(|pending| pending == id) {
            self.pending.remove(at);
        } else {
            problems.push(format!(
                "messages[{i}] (tool) answers tool_call_id {id:?} after a later user or assistant message"
            ));
        }
    }
}

fn check_tool_calls(
    i: usize,
    message: &Value,
    offered: Option<&HashSet<String>>,
    history: &mut History,
    problems: &mut Vec<String>,
) {
    let calls = match message.get("tool_calls") {
        None | Some(Value::Null) => return,
        Some(Value::Array(calls)) => calls,
        Some(_) => {
            problems.push(format!("messages[{i}].tool_calls is not an array"));
            return;
        }
    };
    for (j, call) in calls.iter().enumerate() {
        let at = format!("messages[{i}].tool_calls[{j}]");
        match call["id"].as_str() {
            None | Some("") => problems.push(format!("{at} has no `id`")),
            Some(id) if !history.issued.insert(id.to_owned()) => {
                problems.push(format!("{at} reuses tool call id {id:?}"));
            }
            Some(id) => history.pending.push(id.to_owned()),
        }
        if call["type"] != "function" {
            problems.push(format!(
                "{at} has `type` {} instead of \"function\"",
                call["type"]
            ));
        }
        match call["function"]["name"].as_str() {
            None | Some("") => problems.push(format!("{at} has no `function.name`")),
            Some(name) => {
                if offered.is_some_and(|offered| !offered.contains(name)) {
                    problems.push(format!("{at} calls {name:?}, which is not an offered tool"));
                }
            }
        }
        if !call["function"]["arguments"].is_string() {
            problems.push(format!("{at} has no string `function.arguments`"));
        }
    }
}

/// The names of the offered tools, when `tools` is present.
fn offered_tools(body: &Value, problems: &mut Vec<String>) -> Option<HashSet<String>> {
    let tools = match body.get("tools") {
        None | Some(Value::Null) => return None,
        Some(Value::Array(tools)) => tools,
        Some(_) => {
            problems.push("`tools` is not an array".to_owned());
            return None;
        }
    };
    if tools.is_empty() {
        problems.push("`tools` is an empty array (the API rejects it; omit the field)".to_owned());
    }
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        if tool["type"] != "function" {
            problems.push(format!(
                "tools[{i}] has `type` {} instead of \"function\"",
                tool["type"]
            ));
        }
        match tool["function"]["name"].as_str() {
            None | Some("") => problems.push(format!("tools[{i}] has no `function.name`")),
            Some(name) => {
                if !names.insert(name.to_owned()) {
                    problems.push(format!("tools[{i}] repeats the tool name {name:?}"));
                }
            }
        }
    }
    Some(names)
}

/// The text of the last `user` message.
pub(super) fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
        .map(|message| wire::text_of(&message["content"]))
        .unwrap_or_default()
}

/// What the request's messages weigh in prompt tokens.
pub(super) fn usage(body: &Value, reply: &Reply) -> Usage {
    Usage::new(&[&body["messages"]], reply)
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.prompt + usage.completion,
    })
}

fn finish_reason(reply: &Reply) -> &'static str {
    match reply {
        Reply::Text(_) => "stop",
        Reply::ToolCalls(_) => "tool_calls",
    }
}

/// A non-streamed `chat.completion`.
pub(super) fn completion(id: &str, model: &str, reply: &Reply, usage: Usage) -> Value {
    let message = match reply {
        Reply::Text(text) => json!({"role": "assistant", "content": text}),
        Reply::ToolCalls(calls) => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": calls.iter().map(|call| json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            })).collect::<Vec<_>>(),
        }),
    };
    json!({
        "id": id,
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(reply)}],
        "usage": usage_json(usage),
    })
}

/// The SSE events of a streamed answer, `[DONE]` included.
pub(super) fn chunks(id: &str, model: &str, reply: &Reply, usage: Usage) -> Vec<Bytes> {
    let chunk = |choices: Value| {
        json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": choices,
        })
    };
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
    let mut events = vec![delta(json!({"role": "assistant", "content": ""}))];
    match reply {
        Reply::Text(text) => {
            for piece in wire::split(text, STREAM_PIECES) {
                events.push(delta(json!({"content": piece})));
            }
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                events.push(delta(json!({"tool_calls": [{
                    "index": index,
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": ""},
                }]})));
                for piece in wire::split(&call.arguments, STREAM_PIECES) {
                    events.push(delta(json!({"tool_calls": [{
                        "index": index,
                        "function": {"arguments": piece},
                    }]})));
                }
            }
        }
    }
    events.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": finish_reason(reply)}]),
    ));
    let mut usage_chunk = chunk(json!([]));
    usage_chunk["usage"] = usage_json(usage);
    events.push(usage_chunk);
    let mut out: Vec<Bytes> = events
        .iter()
        .map(|event| Bytes::from(format!("data: {event}\n\n")))
        .collect();
    out.push(Bytes::from_static(b"data: [DONE]\n\n"));
    out
}

/// OpenAI's reasoning models (o1, o3, o4, gpt-5 families) refuse `max_tokens`
/// ("Unsupported parameter: 'max_tokens' is not supported with this model. Use
/// 'max_completion_tokens' instead."); no request may carry both limits.
fn check_token_limit(body: &Value, problems: &mut Vec<String>) {
    let model = body["model"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let reasoning = ["o1", "o3", "o4", "gpt-5"].iter().any(|f| {
        model
            .strip_prefix(f)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', '_']))
    });
    let has = |k: &str| body.get(k).is_some_and(|v| !v.is_null());
    if reasoning && has("max_tokens") {
        problems.push(format!(
            "Unsupported parameter: 'max_tokens' is not supported with model {model:?}. Use 'max_completion_tokens' instead."
        ));
    }
    if has("max_tokens") && has("max_completion_tokens") {
        problems.push("`max_tokens` and `max_completion_tokens` are both set".to_owned());
    }
}
