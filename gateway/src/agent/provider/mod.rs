//! Model providers: the core request/response types, the provider trait, and the
//! OpenAI-compatible and Anthropic clients, and the thinking levels they map. Wire shapes stay inside each client file.

mod anthropic;
pub mod bounded;
mod context_error;
mod headers;
mod openai;
mod retry;
pub mod retry_after;
mod sse;
mod thinking;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;

use crate::config::{ProviderApi, ProviderConfig};
use crate::store::{Role, ToolCallRecord};

pub use anthropic::AnthropicProvider;
pub use headers::{endpoint, header_map};
pub use openai::OpenAiProvider;
pub use retry::{complete_with_retry, complete_with_retry_streaming, RetryPolicy};
pub use thinking::{
    is_reasoning_model, ReasoningBlock, Thinking, UnknownThinking, THINKING_LEVELS,
};

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    /// Images sent with a user message (loaded from the files its notes name, at request
    /// time: `agent::context::inline`); empty for every other message.
    pub images: Vec<ImagePart>,
}

/// An image sent to a vision model: its type and its bytes in base64.
#[derive(Debug, Clone, PartialEq)]
pub struct ImagePart {
    /// `image/jpeg`, `image/png`, `image/gif` or `image/webp` (read from the bytes).
    pub mime: &'static str,
    pub base64: Arc<str>,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// The tools of a run (one set per tool policy and tool list in force, shared by every
/// model call of the runs that get it), with each client's wire rendering of them made
/// on first use: the built-in tools' schemas are serialized once per set instead of once
/// per model call.
#[derive(Debug, Default)]
pub struct ToolSpecs {
    specs: Vec<ToolSpec>,
    /// The `tools` array of an OpenAI-compatible request.
    openai: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
}

impl From<Vec<ToolSpec>> for ToolSpecs {
    fn from(specs: Vec<ToolSpec>) -> Self {
        ToolSpecs {
            specs,
            openai: std::sync::OnceLock::new(),
        }
    }
}

impl std::ops::Deref for ToolSpecs {
    type Target = [ToolSpec];

    fn deref(&self) -> &[ToolSpec] {
        &self.specs
    }
}

#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The model id as the provider knows it (without the `provider/` prefix).
    pub model: String,
    pub system: String,
    pub messages: Vec<ChatMessage>,
    /// Shared by every model call of a run.
    pub tools: Arc<ToolSpecs>,
    pub max_tokens: u32,
    /// How hard the model should think (`None`: the provider's default).
    pub thinking: Option<Thinking>,
    /// The reasoning blocks of the answer whose tool calls the transcript's final tool
    /// results answer (empty when unknown, e.g. after a restart).
    pub reasoning: Vec<ReasoningBlock>,
    /// A reasoning model (OpenAI-compatible: `max_completion_tokens`, not `max_tokens`).
    pub reasoning_model: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub text: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub usage: Usage,
    /// Reasoning blocks to send back with this answer's tool results (Anthropic).
    pub reasoning: Vec<ReasoningBlock>,
    /// The answer stopped at its token limit (`finish_reason: "length"`, Anthropic
    /// `stop_reason: "max_tokens"`): its text is not complete.
    pub cut: bool,
}

/// Why a model call failed. `is_retryable` drives the retry loop.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    #[error("rate limited by the model API (HTTP 429): {message}")]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("model API server error (HTTP {status}): {message}")]
    Server {
        status: u16,
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("model API request failed (HTTP {status}): {message}")]
    Client { status: u16, message: String },
    #[error("could not reach the model API: {0}")]
    Network(String),
    #[error("model API call timed out after {0:?}")]
    Timeout(Duration),
    #[error("model API returned an invalid response: {0}")]
    InvalidResponse(String),
    /// The answer stopped before it was complete (the connection closed mid-stream).
    #[error("the model API's answer was cut off: {0}")]
    Truncated(String),
    /// The provider refused the request as longer than the model's context window
    /// (OpenAI `context_length_exceeded`, Anthropic `prompt is too long`); see
    /// `context_error`.
    #[error("the conversation is too long for the model's context window (the model API said: {0}); send /compact or /new")]
    ContextTooLong(String),
}

impl ProviderError {
    /// The model cannot serve now, through no fault of the request (after the retries):
    /// a server error, a timeout, no connection, a cut-off answer, a rate limit, or the
    /// provider refusing the credentials (401/403). A fallback model serves the turn.
    /// A request the provider refuses as wrong (400, 404, …) is not an outage.
    pub fn is_outage(&self) -> bool {
        match self {
            ProviderError::Client { status, .. } => matches!(status, 401 | 403),
            ProviderError::InvalidResponse(_) | ProviderError::ContextTooLong(_) => false,
            _ => true,
        }
    }

    /// A short reason for the chat: `HTTP 503`, `a timeout`, ….
    pub fn brief(&self) -> String {
        match self {
            ProviderError::RateLimited { .. } => "HTTP 429".into(),
            ProviderError::Server { status, .. } | ProviderError::Client { status, .. } => {
                format!("HTTP {status}")
            }
            ProviderError::Network(_) => "unreachable".into(),
            ProviderError::Timeout(_) => "timed out".into(),
            ProviderError::InvalidResponse(_) => "invalid answer".into(),
            ProviderError::Truncated(_) => "answer cut off".into(),
            ProviderError::ContextTooLong(_) => "request too long".into(),
        }
    }

    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Server { .. }
                | ProviderError::Network(_)
                | ProviderError::Timeout(_)
                | ProviderError::Truncated(_)
        )
    }

    /// The delay the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ProviderError::RateLimited { retry_after, .. }
            | ProviderError::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Build the error for a non-success HTTP status.
    pub(crate) fn from_status(
        status: u16,
        retry_after: Option<Duration>,
        body: &str,
    ) -> ProviderError {
        let message = summarize_error_body(body);
        match status {
            429 => ProviderError::RateLimited {
                retry_after,
                message,
            },
            500..=599 => ProviderError::Server {
                status,
                retry_after,
                message,
            },
            _ if context_error::is_context_length(status, body) => {
                ProviderError::ContextTooLong(message)
            }
            _ => ProviderError::Client { status, message },
        }
    }
}

/// Pull `error.message` out of a JSON error body, else the body; cut to a readable length.
fn summarize_error_body(body: &str) -> String {
    const MAX: usize = 300;
    let parsed = serde_json::from_str::<serde_json::Value>(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message"))
        .and_then(|m| m.as_str())
        .unwrap_or(body)
        .trim();
    if message.chars().count() > MAX {
        format!("{}…", message.chars().take(MAX).collect::<String>())
    } else if message.is_empty() {
        "(empty body)".into()
    } else {
        message.to_string()
    }
}

/// The `Retry-After` header of an answer (seconds or an HTTP-date), capped; see
/// [`retry_after::parse`].
pub(crate) fn retry_after_header(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    retry_after::parse(value, std::time::SystemTime::now())
}

/// A model API client.
#[async_trait]
pub trait Provider: Send + Sync {
    /// One model call. Dropping the future drops the HTTP request.
    async fn complete(&self, req: &ModelRequest) -> Result<ModelResponse, ProviderError>;

    /// One model call that hands each piece of the answer's text to `on_text` as it
    /// arrives, in order (the pieces of one call add up to a prefix of its text). A
    /// provider that does not stream answers through [`Provider::complete`] and reports
    /// nothing before the answer is whole.
    async fn complete_streaming(
        &self,
        req: &ModelRequest,
        on_text: &mut (dyn for<'s> FnMut(&'s str) + Send),
    ) -> Result<ModelResponse, ProviderError> {
        let _ = on_text;
        self.complete(req).await
    }
}

/// Build the client for a configured provider. `fallback_key` is used when the provider
/// has no `apiKey` of its own (from OPENAI_API_KEY / ANTHROPIC_API_KEY).
pub fn build(
    http: &reqwest::Client,
    cfg: &ProviderConfig,
    fallback_key: Option<String>,
) -> Arc<dyn Provider> {
    let key = cfg.api_key.clone().or(fallback_key);
    let headers = headers::header_map(&cfg.headers);
    match cfg.api {
        ProviderApi::OpenaiChat => Arc::new(OpenAiProvider::new(
            http.clone(),
            cfg.base_url
                .clone()
                .unwrap_or_else(|| "https://api.openai.com/v1".into()),
            key,
            headers,
        )),
        ProviderApi::Anthropic => Arc::new(AnthropicProvider::new(
            http.clone(),
            cfg.base_url
                .clone()
                .unwrap_or_else(|| "https://api.anthropic.com".into()),
            key,
            headers,
        )),
    }
}
