//! Our own `POST /channels/{id}/messages` and `PATCH /channels/{id}/messages/{id}`: serenity's ratelimiter cannot be used with a
//! proxy base URL, so this honours 429 `retry_after` (body or header) and waits out a
//! bucket that `X-RateLimit-Remaining: 0` / `X-RateLimit-Reset-After` say is empty.

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use reqwest::Method;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::backoff::Backoff;
use crate::{ChannelError, LineError};

/// Tries per message part for 429s, 5xx and network errors before the outbox takes over.
const TRIES: u32 = 4;
/// Waits between tries after a network error or a 5xx: 1 s, 2 s, 4 s.
const BACKOFF: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(4));
/// Longest wait this sender accepts inline; longer rate limits go back to the outbox.
const MAX_INLINE_WAIT: Duration = Duration::from_secs(30);

/// Discord's JSON error code for an unknown message.
const UNKNOWN_MESSAGE: u64 = 10008;
/// Discord's JSON error code for editing a message another user wrote.
const OTHER_AUTHOR: u64 = 50005;
/// The message flag that keeps Discord from embedding the links of a message.
const SUPPRESS_EMBEDS: u64 = 1 << 2;

/// A failed REST call: refused by Discord (4xx but 429), or a channel error.
enum RestError {
    Refused {
        status: u16,
        code: Option<u64>,
        text: String,
    },
    Channel(ChannelError),
}

impl From<ChannelError> for RestError {
    fn from(e: ChannelError) -> Self {
        RestError::Channel(e)
    }
}

pub(super) struct Rest {
    client: reqwest::Client,
    base: String,
    auth: String,
    /// Per channel: sending must wait until this instant (an exhausted bucket).
    blocked_until: Mutex<HashMap<u64, Instant>>,
    /// Create messages with `SUPPRESS_EMBEDS`: no embed of a link the bot posts.
    suppress_embeds: bool,
}

impl Rest {
    pub(super) fn new(
        base: &str,
        token: &str,
        suppress_embeds: bool,
    ) -> Result<Rest, reqwest::Error> {
        let token = token.trim();
        let auth = if token.starts_with("Bot ") {
            token.to_string()
        } else {
            format!("Bot {token}")
        };
        Ok(Rest {
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()?,
            base: base.trim_end_matches('/').to_string(),
            auth,
            blocked_until: Mutex::new(HashMap::new()),
            suppress_embeds,
        })
    }

    /// Post a message; the id Discord gave it.
    pub(super) async fn create_message(
        &self,
        channel: u64,
        content: &str,
        components: Option<&Value>,
    ) -> Result<String, ChannelError> {
        let url = format!("{}/api/v10/channels/{channel}/messages", self.base);
        let mut body = json!({"content": content, "allowed_mentions": {"parse": []}});
        if self.suppress_embeds {
            body["flags"] = json!(SUPPRESS_EMBEDS);
        }
        if let Some(c) = components {
            body["components"] = c.clone();
        }
        match self.call(Method::POST, &url, channel, &body).await {
            Ok(text) => Ok(message_id(&text).unwrap_or_default()),
            Err(RestError::Channel(e)) => Err(e),
            Err(RestError::Refused { status, text, .. }) => Err(ChannelError::Permanent(format!(
                "Discord refused the message (HTTP {status}): {text}"
            ))),
        }
    }

    /// Post a message with a file attached (multipart: `payload_json` and `files[0]`);
    /// the id Discord gave it. One try: a 429 or a 5xx goes back to the outbox, which
    /// retries the whole part.
    pub(super) async fn create_message_with_file(
        &self,
        channel: u64,
        content: &str,
        file: &crate::OutboundFile,
    ) -> Result<String, ChannelError> {
        let url = format!("{}/api/v10/channels/{channel}/messages", self.base);
        let bytes = tokio::fs::read(&file.path).await.map_err(|e| {
            ChannelError::Permanent(format!("cannot read the file to send ({}): {e}", file.name))
        })?;
        let mut payload = json!({
            "content": content,
            "allowed_mentions": {"parse": []},
            "attachments": [{"id": 0, "filename": file.name}],
        });
        if self.suppress_embeds {
            payload["flags"] = json!(SUPPRESS_EMBEDS);
        }
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name(file.name.clone())
            .mime_str(&file.mime)
            .map_err(|e| ChannelError::Permanent(format!("bad file type {}: {e}", file.mime)))?;
        let form = reqwest::multipart::Form::new()
            .text("payload_json", payload.to_string())
            .part("files[0]", part);
        let resp = self
            .client
            .post(&url)
            .header("Authorization", &self.auth)
            .multipart(form)
            .send()
            .await
            .map_err(|e| ChannelError::Temporary(e.without_url().to_string()))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        self.note_bucket(channel, &headers);
        let text = resp.text().await.unwrap_or_default();
        match status {
            200..=299 => Ok(message_id(&text).unwrap_or_default()),
            429 => Err(ChannelError::RateLimited(
                retry_after(&headers, &text).unwrap_or(Duration::from_secs(1)),
            )),
            413 => Err(ChannelError::Permanent(format!(
                "Discord refused the file as too large (HTTP 413): {text}"
            ))),
            500..=599 => Err(ChannelError::Temporary(format!("HTTP {status}: {text}"))),
            _ => Err(ChannelError::Permanent(format!(
                "Discord refused the file (HTTP {status}): {text}"
            ))),
        }
    }

    /// Replace the content of message `id` (`PATCH`). A message that is gone (unknown:
    /// 10008) or not the bot's (50005) is [`LineError::Gone`].
    pub(super) async fn edit_message(
        &self,
        channel: u64,
        id: u64,
        content: &str,
    ) -> Result<(), LineError> {
        let url = format!("{}/api/v10/channels/{channel}/messages/{id}", self.base);
        let mut body = json!({"content": content, "allowed_mentions": {"parse": []}});
        if self.suppress_embeds {
            body["flags"] = json!(SUPPRESS_EMBEDS);
        }
        match self.call(Method::PATCH, &url, channel, &body).await {
            Ok(_) => Ok(()),
            Err(RestError::Channel(e)) => Err(e.into()),
            Err(RestError::Refused { status, code, text }) => {
                if status == 404 || matches!(code, Some(UNKNOWN_MESSAGE | OTHER_AUTHOR)) {
                    Err(LineError::Gone(format!("HTTP {status}: {text}")))
                } else {
                    Err(ChannelError::Permanent(format!(
                        "Discord refused the edit (HTTP {status}): {text}"
                    ))
                    .into())
                }
            }
        }
    }

    /// One REST call with the retries: 429 waits (inline up to [`MAX_INLINE_WAIT`]), 5xx
    /// and network errors back off; the answer's body on success.
    async fn call(
        &self,
        method: Method,
        url: &str,
        channel: u64,
        body: &Value,
    ) -> Result<String, RestError> {
        let mut tries = 0;
        loop {
            tries += 1;
            let wait = self
                .blocked_until
                .lock()
                .get(&channel)
                .map(|t| t.saturating_duration_since(Instant::now()));
            if let Some(w) = wait.filter(|w| !w.is_zero()) {
                tokio::time::sleep(w).await;
            }
            let resp = match self
                .client
                .request(method.clone(), url)
                .header("Authorization", &self.auth)
                .json(body)
                .send()
                .await
            {
                Ok(r) => r,
                Err(e) if tries < TRIES => {
                    tracing::warn!(error = %e, %method, "discord: network error; retrying");
                    tokio::time::sleep(BACKOFF.delay(tries)).await;
                    continue;
                }
                Err(e) => return Err(ChannelError::Temporary(e.to_string()).into()),
            };
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            self.note_bucket(channel, &headers);
            let text = resp.text().await.unwrap_or_default();
            match status {
                200..=299 => return Ok(text),
                429 => {
                    let retry = retry_after(&headers, &text).unwrap_or(Duration::from_secs(1));
                    if tries >= TRIES || retry > MAX_INLINE_WAIT {
                        return Err(ChannelError::RateLimited(retry).into());
                    }
                    tracing::warn!(retry_after = ?retry, %method, "discord: rate limited; waiting");
                    tokio::time::sleep(retry).await;
                }
                500..=599 if tries < TRIES => {
                    tracing::warn!(status, %method, "discord: request failed; retrying");
                    tokio::time::sleep(BACKOFF.delay(tries)).await;
                }
                500..=599 => {
                    return Err(ChannelError::Temporary(format!("HTTP {status}: {text}")).into())
                }
                _ => {
                    let code = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| v.get("code").and_then(Value::as_u64));
                    return Err(RestError::Refused { status, code, text });
                }
            }
        }
    }

    /// Remember an exhausted bucket so the next send to this channel waits for its reset.
    fn note_bucket(&self, channel: u64, headers: &reqwest::header::HeaderMap) {
        let get = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        if get("x-ratelimit-remaining").as_deref() == Some("0") {
            if let Some(reset) = get("x-ratelimit-reset-after")
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
            {
                self.blocked_until.lock().insert(
                    channel,
                    Instant::now() + Duration::from_secs_f64(reset.min(60.0)),
                );
            }
        }
    }
}

/// The `id` of a message object (Discord's ids are strings of digits).
fn message_id(body: &str) -> Option<String> {
    let v = serde_json::from_str::<Value>(body).ok()?;
    let id = v.get("id")?.as_str()?;
    (!id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit()))
        .then(|| id.to_string())
}

/// `retry_after` in seconds from the JSON body, else the `Retry-After` header.
fn retry_after(headers: &reqwest::header::HeaderMap, body: &str) -> Option<Duration> {
    let from_body = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("retry_after").and_then(Value::as_f64));
    let from_header = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<f64>().ok());
    from_body
        .or(from_header)
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(3600.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_message_id_is_taken_only_when_it_is_a_snowflake() {
        assert_eq!(
            message_id(r#"{"id":"1575997584009330697","content":"x"}"#).as_deref(),
            Some("1575997584009330697")
        );
        assert_eq!(message_id(r#"{"id":157}"#), None);
        assert_eq!(message_id(r#"{"id":"../1"}"#), None);
        assert_eq!(message_id("not json"), None);
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: a panic on any answer body, or an id that is not digits (it goes into
        /// the next request's path).
        #[test]
        fn any_body_gives_digits_or_nothing(body in "(?s).{0,80}", id in "(?s).{0,30}") {
            for text in [body, json!({ "id": id }).to_string()] {
                if let Some(id) = message_id(&text) {
                    prop_assert!(!id.is_empty() && id.len() <= 20);
                    prop_assert!(id.bytes().all(|b| b.is_ascii_digit()));
                }
            }
        }
    }
}
