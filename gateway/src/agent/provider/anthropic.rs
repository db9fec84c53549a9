//! Anthropic Messages API (non-streaming).

use async_trait::async_trait;
use serde_json::{json, Value};

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

fn parse_message(v: &Value) -> Result<ModelResponse, ProviderError> {
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::InvalidResponse("no content array in the answer".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            Some("tool_use") => tool_calls.push(ToolCallRecord {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments: block
                    .get("input")
                    .map(Value::to_string)
                    .unwrap_or_else(|| "{}".into()),
            }),
            _ => {}
        }
    }
    let usage = Usage {
        input_tokens: v
            .pointer("/usage/input_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        output_tokens: v
            .pointer("/usage/output_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
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
        let resp = rb
            .send()
            .await
            .map_err(|e| ProviderError::Network(e.to_string()))?;
        let status = resp.status();
        let retry_after = retry_after_header(resp.headers());
        let text = resp
            .text()
            .await
            .map_err(|e| ProviderError::Network(e.to_string()))?;
        if !status.is_success() {
            return Err(ProviderError::from_status(
                status.as_u16(),
                retry_after,
                &text,
            ));
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            ProviderError::InvalidResponse(format!(
                "{e}; body starts: {}",
                text.chars().take(120).collect::<String>()
            ))
        })?;
        parse_message(&v)
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
}
