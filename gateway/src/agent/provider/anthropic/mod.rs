//! Anthropic Messages API, streamed over SSE (typed events in `stream`), with extended
//! thinking when the run asks for it. Also accepts a plain `message` answer from servers
//! that ignore `stream: true`.

mod message;
mod stream;
mod wire;

use async_trait::async_trait;

use self::stream::StreamReader;
use super::{bounded, retry_after_header, ModelRequest, ModelResponse, Provider, ProviderError};

const API_VERSION: &str = "2023-06-01";

pub struct AnthropicProvider {
    http: reqwest::Client,
    /// The Messages URL (the base URL's query kept).
    url: String,
    api_key: Option<String>,
    /// The provider's configured headers, sent on every request.
    headers: reqwest::header::HeaderMap,
}

impl AnthropicProvider {
    pub fn new(
        http: reqwest::Client,
        base_url: String,
        api_key: Option<String>,
        headers: reqwest::header::HeaderMap,
    ) -> Self {
        // Accept both `https://api.anthropic.com` and `.../v1`.
        let (path, query) = match base_url.split_once('?') {
            Some((p, q)) => (p, format!("?{q}")),
            None => (base_url.as_str(), String::new()),
        };
        let base = path.trim_end_matches('/').trim_end_matches("/v1");
        AnthropicProvider {
            http,
            url: super::endpoint(&format!("{base}{query}"), "/v1/messages"),
            api_key,
            headers,
        }
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
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
            .header("anthropic-version", API_VERSION)
            .json(&wire::request_body(req));
        if let Some(key) = &self.api_key {
            rb = rb.header("x-api-key", key);
        }
        let mut resp = rb
            .send()
            .await
            .map_err(|e| ProviderError::Network(crate::runtime::roots::describe(&e)))?;
        let status = resp.status();
        if !status.is_success() {
            let retry_after = retry_after_header(resp.headers());
            let text = bounded::error_body(&mut resp).await;
            return Err(ProviderError::from_status(
                status.as_u16(),
                retry_after,
                &text,
            ));
        }
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            return message::parse_body(&bounded::answer_body(&mut resp).await?);
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
