//! What a channel's `switchboard doctor` probe returns, and the helpers probes share: one
//! `GET` whose errors never quote its URL (tokens travel in some platforms' URLs), and
//! the token lookup (configured, else the environment).

use std::time::Duration;

use serde_json::Value;

/// Longest one check's request may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The outcome of a channel's doctor check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Ok(String),
    Fail(String),
    /// Not checked (e.g. the channel is disabled).
    Skip(String),
}

/// A client for the checks (a `TIMEOUT` on each request).
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .unwrap_or_default()
}

/// Send `rb`, with the outcome as (HTTP status, JSON body) or a network error without its
/// URL.
pub async fn call(rb: reqwest::RequestBuilder) -> Result<(u16, Value), String> {
    let resp = rb.send().await.map_err(|e| {
        let e = e.without_url();
        if e.is_timeout() {
            format!("no answer within {}s", TIMEOUT.as_secs())
        } else {
            format!("cannot connect ({e})")
        }
    })?;
    let status = resp.status().as_u16();
    let body = resp.json::<Value>().await.unwrap_or(Value::Null);
    Ok((status, body))
}

/// A token: as configured, else from the environment variable `var`; blank is none.
pub fn token(
    configured: &Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
    var: &str,
) -> Option<String> {
    configured
        .clone()
        .or_else(|| env(var))
        .filter(|t| !t.trim().is_empty())
}
