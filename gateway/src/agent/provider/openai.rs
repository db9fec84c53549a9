//! OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter,
//! DeepSeek), streamed over SSE. Also accepts a plain JSON answer from servers that
//! ignore `stream: true`.

use std::collections::BTreeMap;

use async_trait::async_trait;
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

use super::sse::SseParser;
use super::{
    retry_after_header, ChatMessage, ModelRequest, ModelResponse, Provider, ProviderError, Usage,
};
use crate::store::{Role, ToolCallRecord};

pub struct OpenAiProvider {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
}

impl OpenAiProvider {
    pub fn new(http: reqwest::Client, base_url: String, api_key: Option<String>) -> Self {
        OpenAiProvider {
            http,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
        }
    }
}

/// One message of the request, borrowed from the model request.
#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    /// Only on tool results (`null` if the call had no id).
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<Option<&'a str>>,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    r#type: &'static str,
    function: WireCallFunction<'a>,
}

#[derive(Serialize)]
struct WireCallFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

fn wire_message(m: &ChatMessage) -> WireMessage<'_> {
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let tool_calls = match m.role {
        Role::Assistant => m
            .tool_calls
            .iter()
            .map(|c| WireCall {
                id: &c.id,
                r#type: "function",
                function: WireCallFunction {
                    name: &c.name,
                    arguments: &c.arguments,
                },
            })
            .collect(),
        _ => Vec::new(),
    };
    WireMessage {
        role,
        content: &m.content,
        tool_calls,
        tool_call_id: (m.role == Role::Tool).then_some(m.tool_call_id.as_deref()),
    }
}

/// The chat completions request body. Borrowed from the request (no copy of the tool
/// schemas on every model call).
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    stream: bool,
    stream_options: StreamOptions,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireTool<'a> {
    r#type: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

fn request_body(req: &ModelRequest) -> WireRequest<'_> {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(WireMessage {
            role: "system",
            content: &req.system,
            tool_calls: Vec::new(),
            tool_call_id: None,
        });
    }
    messages.extend(req.messages.iter().map(wire_message));
    WireRequest {
        model: &req.model,
        messages,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        max_tokens: req.max_tokens,
        tools: req
            .tools
            .iter()
            .map(|t| WireTool {
                r#type: "function",
                function: WireFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                },
            })
            .collect(),
    }
}

/// Tool call being assembled from stream deltas, by index.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
struct Accumulator {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    usage: Usage,
    done: bool,
}

impl Accumulator {
    fn apply_chunk(&mut self, chunk: &Value) -> Result<(), ProviderError> {
        if let Some(err) = chunk.get("error") {
            return Err(ProviderError::InvalidResponse(format!(
                "error in stream: {err}"
            )));
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = parse_usage(u);
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(());
        };
        for choice in choices {
            let Some(delta) = choice.get("delta") else {
                continue;
            };
            if let Some(t) = delta.get("content").and_then(Value::as_str) {
                self.text.push_str(t);
            }
            for tc in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = tc.get("index").and_then(Value::as_u64).unwrap_or(0);
                let call = self.calls.entry(index).or_default();
                if let Some(id) = tc.get("id").and_then(Value::as_str) {
                    call.id = id.to_string();
                }
                if let Some(f) = tc.get("function") {
                    if let Some(n) = f.get("name").and_then(Value::as_str) {
                        call.name.push_str(n);
                    }
                    if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                        call.arguments.push_str(a);
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<ModelResponse, ProviderError> {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (i, c) in self.calls {
            if c.name.is_empty() {
                return Err(ProviderError::InvalidResponse(format!(
                    "tool call #{i} has no function name"
                )));
            }
            let id = if c.id.is_empty() {
                format!("call_{}", uuid::Uuid::new_v4().simple())
            } else {
                c.id
            };
            tool_calls.push(ToolCallRecord {
                id,
                name: c.name,
                arguments: c.arguments,
            });
        }
        Ok(ModelResponse {
            text: self.text,
            tool_calls,
            usage: self.usage,
        })
    }
}

fn parse_usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        output_tokens: u
            .get("completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    }
}

/// A non-streamed `chat.completion` object.
fn parse_completion(v: &Value) -> Result<ModelResponse, ProviderError> {
    let msg = v.pointer("/choices/0/message").ok_or_else(|| {
        ProviderError::InvalidResponse("no choices[0].message in the answer".into())
    })?;
    let mut acc = Accumulator::default();
    if let Some(t) = msg.get("content").and_then(Value::as_str) {
        acc.text = t.to_string();
    }
    for (i, tc) in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        acc.calls.insert(
            i as u64,
            PartialCall {
                id: tc
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: tc
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments: tc
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            },
        );
    }
    if let Some(u) = v.get("usage") {
        acc.usage = parse_usage(u);
    }
    acc.finish()
}

#[async_trait]
impl Provider for OpenAiProvider {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ProviderError> {
        let mut rb = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .json(&request_body(req));
        if let Some(key) = &self.api_key {
            rb = rb.bearer_auth(key);
        }
        let resp = rb
            .send()
            .await
            .map_err(|e| ProviderError::Network(e.to_string()))?;
        let status = resp.status();
        if !status.is_success() {
            let retry_after = retry_after_header(resp.headers());
            let body = resp.text().await.unwrap_or_default();
            return Err(ProviderError::from_status(
                status.as_u16(),
                retry_after,
                &body,
            ));
        }
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            let body = resp
                .text()
                .await
                .map_err(|e| ProviderError::Network(e.to_string()))?;
            let v: Value = serde_json::from_str(&body).map_err(|e| {
                ProviderError::InvalidResponse(format!("{e}; body starts: {}", head(&body)))
            })?;
            return parse_completion(&v);
        }
        let mut stream = resp.bytes_stream();
        let mut parser = SseParser::default();
        let mut acc = Accumulator::default();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| ProviderError::Network(e.to_string()))?;
            for data in parser.feed(&chunk) {
                handle_data(&mut acc, &data)?;
            }
            if acc.done {
                break;
            }
        }
        for data in parser.finish() {
            handle_data(&mut acc, &data)?;
        }
        if !acc.done && acc.text.is_empty() && acc.calls.is_empty() {
            return Err(ProviderError::InvalidResponse(
                "the stream ended without any content".into(),
            ));
        }
        acc.finish()
    }
}

fn handle_data(acc: &mut Accumulator, data: &str) -> Result<(), ProviderError> {
    if data.trim() == "[DONE]" {
        acc.done = true;
        return Ok(());
    }
    let v: Value = serde_json::from_str(data).map_err(|e| {
        ProviderError::InvalidResponse(format!("bad stream chunk ({e}): {}", head(data)))
    })?;
    acc.apply_chunk(&v)
}

fn head(s: &str) -> String {
    s.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::ToolSpec;
    use serde_json::json;

    #[test]
    fn request_body_has_the_chat_completions_shape() {
        let call = ToolCallRecord {
            id: "call_1".into(),
            name: "sessions_list".into(),
            arguments: "{}".into(),
        };
        let msg =
            |role, content: &str, tool_calls: Vec<ToolCallRecord>, id: Option<&str>| ChatMessage {
                role,
                content: content.into(),
                tool_calls,
                tool_call_id: id.map(str::to_string),
                tool_name: None,
            };
        let req = ModelRequest {
            model: "m".into(),
            system: "be brief".into(),
            messages: vec![
                msg(Role::User, "hi", Vec::new(), None),
                msg(Role::Assistant, "", vec![call], None),
                msg(Role::Tool, "[]", Vec::new(), Some("call_1")),
            ],
            tools: vec![ToolSpec {
                name: "sessions_list".into(),
                description: "list".into(),
                parameters: json!({"type": "object"}),
            }]
            .into(),
            max_tokens: 7,
        };
        let body = serde_json::to_value(request_body(&req)).expect("serializes");
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "sessions_list", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "[]"},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_tokens": 7,
                "tools": [{"type": "function", "function": {"name": "sessions_list", "description": "list", "parameters": {"type": "object"}}}],
            })
        );
    }

    #[test]
    fn assembles_tool_calls_from_deltas() {
        let mut acc = Accumulator::default();
        let chunks = [
            json!({"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"sessions_list","arguments":""}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"lim"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"it\":2}"}}]}}]}),
            json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}),
        ];
        for c in &chunks {
            acc.apply_chunk(c).expect("chunk");
        }
        let r = acc.finish().expect("finish");
        assert_eq!(
            r,
            ModelResponse {
                text: String::new(),
                tool_calls: vec![ToolCallRecord {
                    id: "call_1".into(),
                    name: "sessions_list".into(),
                    arguments: "{\"limit\":2}".into()
                }],
                usage: Usage {
                    input_tokens: 10,
                    output_tokens: 3
                },
            }
        );
    }

    #[test]
    fn garbage_chunk_is_an_invalid_response() {
        let mut acc = Accumulator::default();
        assert!(matches!(
            handle_data(&mut acc, "not json"),
            Err(ProviderError::InvalidResponse(_))
        ));
    }
}
