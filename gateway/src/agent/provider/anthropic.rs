//! Anthropic Messages API (non-streaming), with the answer read within
//! `provider::bounded`'s limits.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::bounded::{self, AnswerBudget, MAX_TOOL_CALLS};
use super::{
    retry_after_header, ChatMessage, ModelRequest, ModelResponse, Provider, ProviderError, Usage,
};
use crate::store::{Role, ToolCallRecord};

const API_VERSION: &str = "2023-06-01";

pub struct AnthropicProvider {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
}

impl AnthropicProvider {
    pub fn new(http: reqwest::Client, base_url: String, api_key: Option<String>) -> Self {
        // Accept both `https://api.anthropic.com` and `.../v1`.
        let base_url = base_url
            .trim_end_matches('/')
            .trim_end_matches("/v1")
            .to_string();
        AnthropicProvider {
            http,
            base_url,
            api_key,
        }
    }
}

/// Convert the transcript into Anthropic's alternating user/assistant messages: tool
/// results become `tool_result` blocks of a user message; consecutive same-role
/// messages are merged.
fn wire_messages(msgs: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for m in msgs {
        let (role, blocks) = match m.role {
            Role::User => ("user", vec![json!({"type": "text", "text": m.content})]),
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

/// A Messages API answer body: the answer, or a clear error for anything else (not JSON,
/// cut off, without a `content` array, past the bounds).
fn parse_body(text: &str) -> Result<ModelResponse, ProviderError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        ProviderError::InvalidResponse(format!(
            "{e}; body starts: {}",
            text.chars().take(120).collect::<String>()
        ))
    })?;
    parse_message(&v)
}

fn parse_message(v: &Value) -> Result<ModelResponse, ProviderError> {
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::InvalidResponse("no content array in the answer".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut budget = AnswerBudget::default();
    for block in content {
        let str_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let t = str_of("text");
                budget.take(t.len())?;
                text.push_str(t);
            }
            Some("tool_use") => {
                if tool_calls.len() >= MAX_TOOL_CALLS {
                    return Err(ProviderError::InvalidResponse(format!(
                        "the answer makes more than {MAX_TOOL_CALLS} tool calls"
                    )));
                }
                let arguments = block
                    .get("input")
                    .map(Value::to_string)
                    .unwrap_or_else(|| "{}".into());
                let (id, name) = (str_of("id"), str_of("name"));
                budget.take(id.len() + name.len() + arguments.len())?;
                tool_calls.push(ToolCallRecord {
                    id: id.to_string(),
                    name: name.to_string(),
                    arguments,
                });
            }
            _ => {}
        }
    }
    let usage = Usage {
        input_tokens: bounded::tokens(v.pointer("/usage/input_tokens").and_then(Value::as_u64)),
        output_tokens: bounded::tokens(v.pointer("/usage/output_tokens").and_then(Value::as_u64)),
    };
    Ok(ModelResponse {
        text,
        tool_calls,
        usage,
    })
}

#[async_trait]
impl Provider for AnthropicProvider {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ProviderError> {
        let mut body = json!({
            "model": req.model,
            "max_tokens": req.max_tokens,
            "messages": wire_messages(&req.messages),
        });
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
        let mut rb = self
            .http
            .post(format!("{}/v1/messages", self.base_url))
            .header("anthropic-version", API_VERSION)
            .json(&body);
        if let Some(key) = &self.api_key {
            rb = rb.header("x-api-key", key);
        }
        let mut resp = rb
            .send()
            .await
            .map_err(|e| ProviderError::Network(e.to_string()))?;
        let status = resp.status();
        let retry_after = retry_after_header(resp.headers());
        if !status.is_success() {
            let text = bounded::error_body(&mut resp).await;
            return Err(ProviderError::from_status(
                status.as_u16(),
                retry_after,
                &text,
            ));
        }
        parse_body(&bounded::answer_body(&mut resp).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            },
            ChatMessage {
                role: Role::Assistant,
                content: String::new(),
                tool_calls: vec![call],
                tool_call_id: None,
                tool_name: None,
            },
            ChatMessage {
                role: Role::Tool,
                content: "ok".into(),
                tool_calls: vec![],
                tool_call_id: Some("t1".into()),
                tool_name: Some("x".into()),
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

    /// Catches: a panic or a partial answer on a body cut anywhere, and unbounded answers.
    #[test]
    fn truncated_and_oversized_bodies_are_clear_errors() {
        let body = json!({
            "content": [
                {"type": "text", "text": "héllo"},
                {"type": "tool_use", "id": "t1", "name": "x", "input": {"a": [1, 2]}},
            ],
            "usage": {"input_tokens": u64::MAX, "output_tokens": 2},
        })
        .to_string();
        let whole = parse_body(&body).expect("whole body");
        assert_eq!(whole.text, "héllo");
        assert_eq!(whole.usage.input_tokens, bounded::MAX_REPORTED_TOKENS);
        for (end, _) in body.char_indices() {
            assert!(
                matches!(
                    parse_body(&body[..end]),
                    Err(ProviderError::InvalidResponse(_))
                ),
                "cut at {end}"
            );
        }
        let calls: Vec<Value> = (0..=MAX_TOOL_CALLS)
            .map(|i| json!({"type": "tool_use", "id": i.to_string(), "name": "x", "input": {}}))
            .collect();
        let err = parse_message(&json!({ "content": calls })).expect_err("too many");
        assert!(
            err.to_string().contains("more than 128 tool calls"),
            "{err}"
        );
        let big = "x".repeat(bounded::MAX_ANSWER_BYTES + 1);
        assert!(parse_message(&json!({"content": [{"type": "text", "text": big}]})).is_err());
    }

    use proptest::prelude::*;

    fn block() -> impl Strategy<Value = Value> {
        prop_oneof![
            ".{0,8}".prop_map(|t| json!({"type": "text", "text": t})),
            (".{0,4}", "[a-z]{0,4}").prop_map(
                |(id, n)| json!({"type": "tool_use", "id": id, "name": n, "input": {"q": id}})
            ),
            Just(json!({"type": "text"})),
            Just(json!({"type": "tool_use"})),
            Just(json!({"type": 5, "text": []})),
            Just(json!(null)),
            Just(json!("text")),
        ]
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: a panic on any answer shape, and text read wrong.
        #[test]
        fn any_answer_shape_parses_without_panic(
            blocks in prop::collection::vec(block(), 0..6),
            usage in prop::option::of((any::<u64>(), ".{0,3}")),
            cut in any::<prop::sample::Index>(),
        ) {
            let v = json!({"content": blocks, "usage": usage.map(|(i, o)| json!({"input_tokens": i, "output_tokens": o}))});
            let want: String = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            let body = v.to_string();
            let r = parse_body(&body).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(r.text, want);
            prop_assert!(r.usage.input_tokens <= bounded::MAX_REPORTED_TOKENS);
            let end = cut.index(body.len());
            if let Some(prefix) = body.get(..end) {
                prop_assert!(parse_body(prefix).is_err(), "a cut body parsed");
            }
        }
    }
}
