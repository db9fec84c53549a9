//! The Messages API request body: the transcript as alternating user/assistant messages,
//! the tools, and extended thinking (with the reasoning blocks a tool-use continuation
//! must send back).

use serde_json::{json, Value};

use crate::agent::provider::{ChatMessage, ModelRequest, ReasoningBlock};
use crate::store::Role;

/// The whole request body, streamed.
pub(super) fn request_body(req: &ModelRequest) -> Value {
    let mut messages = wire_messages(&req.messages);
    let in_tool_loop = ends_in_tool_loop(&messages);
    let budget = req.thinking.and_then(|t| t.anthropic_budget());
    // Anthropic refuses a tool-use continuation with thinking on whose assistant message
    // lost its thinking blocks (a run resumed after a restart: they are not stored). That
    // one step goes without thinking; the next turn has it again.
    let budget = budget.filter(|_| !in_tool_loop || !req.reasoning.is_empty());
    if budget.is_some() && in_tool_loop {
        prepend_reasoning(&mut messages, &req.reasoning);
    }
    let max_tokens = req.max_tokens.saturating_add(budget.unwrap_or(0));
    let mut body = json!({
        "model": req.model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": true,
    });
    if let Some(budget) = budget {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    if !req.system.is_empty() {
        body["system"] = json!(req.system);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// Whether the last (user) message holds tool results: the model is in a tool-use loop
/// (a steered user message merged after the results does not end it).
fn ends_in_tool_loop(messages: &[Value]) -> bool {
    messages.last().is_some_and(|m| {
        m["content"]
            .as_array()
            .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_result"))
    })
}

/// Put `blocks` first in the last assistant message (the one whose tool calls the final
/// tool results answer).
fn prepend_reasoning(messages: &mut [Value], blocks: &[ReasoningBlock]) {
    let Some(last) = messages.iter_mut().rev().find(|m| m["role"] == "assistant") else {
        return;
    };
    let Some(content) = last["content"].as_array_mut() else {
        return;
    };
    let wire: Vec<Value> = blocks
        .iter()
        .map(|b| match b {
            ReasoningBlock::Thinking {
                thinking,
                signature,
            } => json!({"type": "thinking", "thinking": thinking, "signature": signature}),
            ReasoningBlock::Redacted { data } => json!({"type": "redacted_thinking", "data": data}),
        })
        .collect();
    content.splice(0..0, wire);
}

/// Convert the transcript into Anthropic's alternating user/assistant messages: tool
/// results become `tool_result` blocks of a user message; consecutive same-role
/// messages are merged.
pub(super) fn wire_messages(msgs: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for m in msgs {
        let (role, blocks) = match m.role {
            Role::User => {
                let mut blocks: Vec<Value> = m
                    .images
                    .iter()
                    .map(|i| json!({"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": &*i.base64}}))
                    .collect();
                blocks.push(json!({"type": "text", "text": m.content}));
                ("user", blocks)
            }
            Role::Tool => (
                "user",
                vec![
                    json!({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}),
                ],
            ),
            Role::Assistant => {
                let mut blocks = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": m.content}));
                }
                for c in &m.tool_calls {
                    let input: Value =
                        serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                if blocks.is_empty() {
                    blocks.push(json!({"type": "text", "text": "(empty)"}));
                }
                ("assistant", blocks)
            }
        };
        match out.last_mut() {
            Some((r, b)) if r == role => b.extend(blocks),
            _ => out.push((role.to_string(), blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::Thinking;
    use crate::store::ToolCallRecord;

    fn msg(role: Role, content: &str, calls: Vec<ToolCallRecord>, id: Option<&str>) -> ChatMessage {
        ChatMessage {
            role,
            content: content.into(),
            tool_calls: calls,
            tool_call_id: id.map(str::to_string),
            tool_name: None,
            images: Vec::new(),
        }
    }

    fn call() -> ToolCallRecord {
        ToolCallRecord {
            id: "t1".into(),
            name: "x".into(),
            arguments: "{\"a\":1}".into(),
        }
    }

    #[test]
    fn tool_results_become_user_blocks_and_roles_alternate() {
        let call = ToolCallRecord {
            id: "t1".into(),
            name: "x".into(),
            arguments: "{\"a\":1}".into(),
        };
        let msgs = vec![
            ChatMessage {
                role: Role::User,
                content: "hi".into(),
                tool_calls: vec![],
                tool_call_id: None,
                tool_name: None,
                images: Vec::new(),
            },
            ChatMessage {
                role: Role::Assistant,
                content: String::new(),
                tool_calls: vec![call],
                tool_call_id: None,
                tool_name: None,
                images: Vec::new(),
            },
            ChatMessage {
                role: Role::Tool,
                content: "ok".into(),
                tool_calls: vec![],
                tool_call_id: Some("t1".into()),
                tool_name: Some("x".into()),
                images: Vec::new(),
            },
        ];
        let w = wire_messages(&msgs);
        assert_eq!(w.len(), 3);
        assert_eq!(
            w[1]["content"][0],
            json!({"type":"tool_use","id":"t1","name":"x","input":{"a":1}})
        );
        assert_eq!(
            w[2],
            json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]})
        );
    }

    /// Catches: thinking sent without its budget room, a tool-use continuation sent with
    /// thinking on but without the blocks that led to the calls (the API refuses it), or
    /// the blocks put anywhere but first in the calling message.
    #[test]
    fn thinking_budget_and_carried_blocks() {
        let mut req = ModelRequest {
            model: "c".into(),
            system: String::new(),
            messages: vec![msg(Role::User, "hi", vec![], None)],
            tools: std::sync::Arc::new(Vec::new().into()),
            max_tokens: 100,
            thinking: Some(Thinking::Low),
            reasoning: Vec::new(),
            reasoning_model: false,
        };
        let body = request_body(&req);
        assert_eq!(
            (
                body["thinking"].clone(),
                body["max_tokens"].clone(),
                body["stream"].clone()
            ),
            (
                json!({"type": "enabled", "budget_tokens": 2048}),
                json!(2148),
                json!(true)
            )
        );
        req.messages
            .push(msg(Role::Assistant, "", vec![call()], None));
        req.messages.push(msg(Role::Tool, "ok", vec![], Some("t1")));
        let resumed = request_body(&req);
        assert_eq!(resumed["thinking"], Value::Null, "no blocks: no thinking");
        assert_eq!(resumed["max_tokens"], 100);
        req.reasoning = vec![
            ReasoningBlock::Thinking {
                thinking: "hm".into(),
                signature: "s".into(),
            },
            ReasoningBlock::Redacted { data: "d".into() },
        ];
        let body = request_body(&req);
        assert_eq!(body["thinking"]["budget_tokens"], 2048);
        assert_eq!(
            body["messages"][1]["content"],
            json!([
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "redacted_thinking", "data": "d"},
                {"type": "tool_use", "id": "t1", "name": "x", "input": {"a": 1}},
            ])
        );
        req.thinking = Some(Thinking::Off);
        let off = request_body(&req);
        assert_eq!(off["thinking"], Value::Null);
        assert_eq!(
            off["messages"][1]["content"].as_array().map(Vec::len),
            Some(1)
        );
    }

    /// Catches: an image sent as text, or after the text Anthropic reads it with.
    #[test]
    fn a_user_message_with_images_becomes_image_blocks_then_text() {
        let mut m = msg(Role::User, "look", vec![], None);
        m.images = vec![crate::agent::provider::ImagePart {
            mime: "image/jpeg",
            base64: "aGk=".into(),
        }];
        assert_eq!(
            wire_messages(&[m]),
            vec![json!({"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "aGk="}},
                {"type": "text", "text": "look"},
            ]})]
        );
    }
}
