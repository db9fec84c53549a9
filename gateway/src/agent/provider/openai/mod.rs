//! OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp, OpenRouter,
//! DeepSeek), streamed over SSE. Also accepts a plain JSON answer from servers that
//! ignore `stream: true`.

mod answer;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use self::answer::{head, parse_completion, StreamReader};
use super::{
    bounded, retry_after_header, ChatMessage, ModelRequest, ModelResponse, Provider, ProviderError,
    ToolSpecs,
};
use crate::store::Role;

pub struct OpenAiProvider {
    http: reqwest::Client,
    /// The chat completions URL (the base URL's query, e.g. Azure's `api-version`, kept).
    url: String,
    api_key: Option<String>,
    /// The provider's configured headers, sent on every request.
    headers: reqwest::header::HeaderMap,
}

impl OpenAiProvider {
    pub fn new(
        http: reqwest::Client,
        base_url: String,
        api_key: Option<String>,
        headers: reqwest::header::HeaderMap,
    ) -> Self {
        OpenAiProvider {
            http,
            url: super::endpoint(&base_url, "/chat/completions"),
            api_key,
            headers,
        }
    }
}

/// One message of the request, borrowed from the model request.
#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: WireContent<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    /// Only on tool results (`null` if the call had no id).
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<Option<&'a str>>,
}

/// A message's content: its text, or (a user message with images) text and image parts.
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<WirePart<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart<'a> {
    Text { text: &'a str },
    ImageUrl { image_url: WireImageUrl },
}

/// An image as a `data:` URL.
#[derive(Serialize)]
struct WireImageUrl {
    url: String,
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
    let content = if m.images.is_empty() {
        WireContent::Text(&m.content)
    } else {
        let mut parts = vec![WirePart::Text { text: &m.content }];
        parts.extend(m.images.iter().map(|i| WirePart::ImageUrl {
            image_url: WireImageUrl {
                url: format!("data:{};base64,{}", i.mime, i.base64),
            },
        }));
        WireContent::Parts(parts)
    };
    WireMessage {
        role,
        content,
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
    /// The answer's limit for ordinary models.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    /// The answer's limit (reasoning included) for reasoning models, which refuse
    /// `max_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    /// `low` | `medium` | `high`, from the run's thinking level.
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "WireTools::is_empty")]
    tools: WireTools<'a>,
}

/// The request's `tools`: the run's tool set as rendered once ([`ToolSpecs`]), or each
/// spec borrowed if it could not be rendered (it always can: a `Value` serializes).
#[derive(Serialize)]
#[serde(untagged)]
enum WireTools<'a> {
    Rendered(&'a RawValue),
    Each(Vec<WireTool<'a>>),
}

impl WireTools<'_> {
    fn is_empty(&self) -> bool {
        matches!(self, WireTools::Each(each) if each.is_empty())
    }
}

fn wire_tools(tools: &ToolSpecs) -> WireTools<'_> {
    if tools.is_empty() {
        return WireTools::Each(Vec::new());
    }
    if let Some(rendered) = tools.openai.get() {
        return WireTools::Rendered(rendered);
    }
    match serde_json::value::to_raw_value(&each_tool(tools)) {
        Ok(raw) => WireTools::Rendered(tools.openai.get_or_init(|| raw)),
        Err(_) => WireTools::Each(each_tool(tools)),
    }
}

fn each_tool(tools: &ToolSpecs) -> Vec<WireTool<'_>> {
    tools
        .iter()
        .map(|t| WireTool {
            r#type: "function",
            function: WireFunction {
                name: &t.name,
                description: &t.description,
                parameters: &t.parameters,
            },
        })
        .collect()
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
            content: WireContent::Text(&req.system),
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
        max_tokens: (!req.reasoning_model).then_some(req.max_tokens),
        max_completion_tokens: req.reasoning_model.then_some(req.max_tokens),
        reasoning_effort: req.thinking.and_then(|t| t.reasoning_effort()),
        tools: wire_tools(&req.tools),
    }
}

#[async_trait]
impl Provider for OpenAiProvider {
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ProviderError> {
        self.complete_streaming(req, &mut |_| {}).await
    }

    async fn complete_streaming(
        &self,
        req: &ModelRequest,
        on_text: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<ModelResponse, ProviderError> {
        let mut rb = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .json(&request_body(req));
        if let Some(key) = &self.api_key {
            rb = rb.bearer_auth(key);
        }
        let mut resp = rb
            .send()
            .await
            .map_err(|e| ProviderError::Network(crate::runtime::roots::describe(&e)))?;
        let status = resp.status();
        if !status.is_success() {
            let retry_after = retry_after_header(resp.headers());
            let body = bounded::error_body(&mut resp).await;
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
            let body = bounded::answer_body(&mut resp).await?;
            let v: Value = serde_json::from_str(&body).map_err(|e| {
                ProviderError::InvalidResponse(format!("{e}; body starts: {}", head(&body)))
            })?;
            return parse_completion(&v);
        }
        let mut reader = StreamReader::default();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| ProviderError::Network(e.to_string()))?
        {
            // Streamed output is progress for the stale-run heartbeat.
            crate::agent::run::heartbeat::touch();
            if reader.feed_with(&chunk, on_text)? {
                break;
            }
        }
        reader.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::ToolSpec;
    use crate::store::ToolCallRecord;
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
                images: Vec::new(),
            };
        let req = ModelRequest {
            model: "m".into(),
            system: "be brief".into(),
            messages: vec![
                msg(Role::User, "hi", Vec::new(), None),
                msg(Role::Assistant, "", vec![call], None),
                msg(Role::Tool, "[]", Vec::new(), Some("call_1")),
            ],
            tools: std::sync::Arc::new(
                vec![ToolSpec {
                    name: "sessions_list".into(),
                    description: "list".into(),
                    parameters: json!({"type": "object"}),
                }]
                .into(),
            ),
            max_tokens: 7,
            thinking: Some(crate::agent::provider::Thinking::Medium),
            reasoning: Vec::new(),
            reasoning_model: false,
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
                "reasoning_effort": "medium",
                "tools": [{"type": "function", "function": {"name": "sessions_list", "description": "list", "parameters": {"type": "object"}}}],
            })
        );
    }

    /// Catches: a reasoning model sent `max_tokens` (OpenAI refuses it: "Unsupported
    /// parameter: 'max_tokens' … Use 'max_completion_tokens' instead") or its thinking
    /// level sent as anything but `reasoning_effort`.
    #[test]
    fn reasoning_models_get_max_completion_tokens() {
        let mut req = ModelRequest {
            model: "o3-mini".into(),
            system: String::new(),
            messages: Vec::new(),
            tools: Default::default(),
            max_tokens: 9000,
            thinking: Some(crate::agent::provider::Thinking::High),
            reasoning: Vec::new(),
            reasoning_model: true,
        };
        let body = serde_json::to_value(request_body(&req)).expect("serializes");
        let limits = |b: &Value| {
            (
                b.get("max_tokens").cloned(),
                b.get("max_completion_tokens").cloned(),
                b.get("reasoning_effort").cloned(),
            )
        };
        assert_eq!(
            limits(&body),
            (None, Some(json!(9000)), Some(json!("high")))
        );
        req.reasoning_model = false;
        req.thinking = None;
        let body = serde_json::to_value(request_body(&req)).expect("serializes");
        assert_eq!(limits(&body), (Some(json!(9000)), None, None));
    }

    /// Catches: an image sent as text, or a data URL without its type.
    #[test]
    fn a_user_message_with_images_becomes_text_and_image_url_parts() {
        let m = ChatMessage {
            role: Role::User,
            content: "look".into(),
            tool_calls: vec![],
            tool_call_id: None,
            tool_name: None,
            images: vec![crate::agent::provider::ImagePart {
                mime: "image/png",
                base64: "aGk=".into(),
            }],
        };
        assert_eq!(
            serde_json::to_value(wire_message(&m)).expect("serializes"),
            json!({"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
            ]})
        );
    }
}
