//! The Web API client: `POST {apiUrl}/<method>` with a bearer token, JSON or form bodies,
//! answers read within a size bound. A 429 is waited out for its `Retry-After` (the
//! platform's delay first, as the shared backoff promises) and a 5xx or network failure
//! retried on [`crate::backoff`], a few times, before the error goes back to the caller
//! (the outbox, which retries later, honouring [`ChannelError::RateLimited`]).

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use crate::backoff::Backoff;
use crate::ChannelError;

/// Longest answer read from the Web API.
const MAX_ANSWER: usize = 1 << 20;
/// Tries of one call (the first and the retries).
const TRIES: u32 = 3;
/// Waits between retries of a failed call (not a 429: that waits `Retry-After`).
const RETRY: Backoff = Backoff::new(Duration::from_millis(500), Duration::from_secs(8));
/// A `Retry-After` longer than this is not waited out here: the caller gets
/// [`ChannelError::RateLimited`] and tries again later.
const MAX_INLINE_WAIT: Duration = Duration::from_secs(30);
/// Without a `Retry-After` header, a 429 waits this long.
const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a Web API call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// Slack answered `{ok:false, error}`.
    #[error("Slack refused {method}: {error}")]
    Slack { method: String, error: String },
    /// HTTP 429, with its `Retry-After`.
    #[error("Slack rate-limits {method}; retry after {after:?}")]
    RateLimited { method: String, after: Duration },
    /// Network failure, a 5xx, or an answer that is not Slack's JSON.
    #[error("{method}: {detail}")]
    Transport { method: String, detail: String },
}

impl ApiError {
    /// The `error` string of a refusal.
    pub fn slack_error(&self) -> Option<&str> {
        match self {
            ApiError::Slack { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Errors Slack gives for a temporary condition: worth retrying.
const TEMPORARY: &[&str] = &[
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
    "ratelimited",
];

impl From<ApiError> for ChannelError {
    fn from(e: ApiError) -> ChannelError {
        match &e {
            ApiError::RateLimited { after, .. } => ChannelError::RateLimited(*after),
            ApiError::Slack { error, .. } if TEMPORARY.contains(&error.as_str()) => {
                ChannelError::Temporary(e.to_string())
            }
            ApiError::Slack { .. } => ChannelError::Permanent(e.to_string()),
            ApiError::Transport { .. } => ChannelError::Temporary(e.to_string()),
        }
    }
}

/// A request body.
#[derive(Debug, Clone)]
pub(super) enum Body {
    None,
    Json(Value),
    Form(Vec<(&'static str, String)>),
}

/// Which token a call carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token {
    Bot,
    App,
}

pub(super) struct Web {
    http: reqwest::Client,
    base: String,
    bot: String,
    app: String,
}

impl Web {
    pub(super) fn new(base: &str, bot: &str, app: &str) -> Result<Web, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .build()?;
        Ok(Web {
            http,
            base: base.trim_end_matches('/').to_owned(),
            bot: bot.to_owned(),
            app: app.to_owned(),
        })
    }

    pub(super) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub(super) fn bot_token(&self) -> &str {
        &self.bot
    }

    /// Call `method` with the bot token, retrying as the module doc says.
    pub(super) async fn call(&self, method: &str, body: Body) -> Result<Value, ApiError> {
        self.call_with(method, Token::Bot, body).await
    }

    pub(super) async fn call_with(
        &self,
        method: &str,
        token: Token,
        body: Body,
    ) -> Result<Value, ApiError> {
        let mut failures = 0;
        loop {
            let e = match self.once(method, token, &body).await {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            failures += 1;
            let wait = match &e {
                ApiError::RateLimited { after, .. } if *after <= MAX_INLINE_WAIT => *after,
                ApiError::RateLimited { .. } => return Err(e),
                ApiError::Slack { error, .. } if !TEMPORARY.contains(&error.as_str()) => {
                    return Err(e)
                }
                _ => RETRY.delay(failures),
            };
            if failures >= TRIES {
                return Err(e);
            }
            tracing::warn!(error = %e, retry_in = ?wait, "slack: Web API call failed; retrying");
            tokio::time::sleep(wait).await;
        }
    }

    /// One call, no retry.
    async fn once(&self, method: &str, token: Token, body: &Body) -> Result<Value, ApiError> {
        let transport = |detail: String| ApiError::Transport {
            method: method.to_owned(),
            detail,
        };
        let token = match token {
            Token::Bot => &self.bot,
            Token::App => &self.app,
        };
        let req = self
            .http
            .post(format!("{}/{method}", self.base))
            .bearer_auth(token);
        let req = match body {
            Body::None => req,
            Body::Json(v) => req.json(v),
            Body::Form(f) => req.form(f),
        };
        let resp = req
            .send()
            .await
            .map_err(|e| transport(e.without_url().to_string()))?;
        let status = resp.status();
        if status.as_u16() == 429 {
            let after = resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map_or(DEFAULT_RETRY_AFTER, Duration::from_secs);
            return Err(ApiError::RateLimited {
                method: method.to_owned(),
                after,
            });
        }
        if !status.is_success() {
            return Err(transport(format!("HTTP {status}")));
        }
        let bytes = read_capped(resp, MAX_ANSWER).await.map_err(transport)?;
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| transport(format!("an answer that is not JSON: {e}")))?;
        if v["ok"].as_bool() == Some(true) {
            return Ok(v);
        }
        let error = v["error"]
            .as_str()
            .unwrap_or("an answer without ok")
            .chars()
            .take(200)
            .collect();
        Err(ApiError::Slack {
            method: method.to_owned(),
            error,
        })
    }
}

/// A response body, refused past `max` bytes while reading.
pub(super) async fn read_capped(resp: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    if resp.content_length().is_some_and(|l| l > max as u64) {
        return Err(format!("an answer over {max} bytes"));
    }
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.without_url().to_string())?;
        if out.len() + chunk.len() > max {
            return Err(format!("an answer over {max} bytes"));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
