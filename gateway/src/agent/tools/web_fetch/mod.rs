//! `web_fetch {url, maxChars?}` (`group:web`): an HTTP(S) GET with bounded redirects (5,
//! each checked), size (2 MB) and time (30 s); HTML becomes Markdown (htmd), other text
//! is returned as is. The conversion is bounded in depth and runs on a thread of its own
//! (`html`), so no page can overflow a runtime worker's stack. Internal addresses are
//! refused at every hop unless the host is in `tools.web.fetch.allowHosts` (`ssrf`).

pub mod html;
pub mod ssrf;

use std::net::IpAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Url;
use serde_json::{json, Value};

use super::{opt_arg, str_arg, Tool, ToolContext, ToolError};
use crate::agent::provider::ToolSpec;

/// How far one fetch may go.
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// Redirects followed at most.
    redirects: usize,
    /// Largest body read; the rest is cut.
    body: usize,
    /// The whole fetch, redirects included.
    time: Duration,
}

/// The limits of every `web_fetch` call.
const LIMITS: Limits = Limits {
    redirects: 5,
    body: 2 * 1024 * 1024,
    time: Duration::from_secs(30),
};
/// Default and largest `maxChars`.
const DEFAULT_CHARS: u64 = 50_000;
const MAX_CHARS: u64 = 60_000;
/// HTML elements whose content is not page text.
const SKIPPED_TAGS: &[&str] = &[
    "head", "script", "style", "noscript", "template", "svg", "iframe",
];
/// Longest URL accepted.
const MAX_URL: usize = 8 * 1024;

pub struct WebFetch;

/// A fetch that did not produce a page: told to the model.
fn refuse(msg: impl Into<String>) -> ToolError {
    ToolError::Model(msg.into())
}

#[async_trait]
impl Tool for WebFetch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "web_fetch".into(),
            description: "Fetch a web page (http or https) and return its text; HTML is turned into Markdown. Internal and private addresses are refused.".into(),
            parameters: json!({"type": "object", "properties": {
                "url": {"type": "string"},
                "maxChars": {"type": "integer", "minimum": 100, "maximum": MAX_CHARS}
            }, "required": ["url"]}),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let url = str_arg(&args, "url")?;
        if url.len() > MAX_URL {
            return Err(refuse(format!(
                "the url is {} bytes; at most {MAX_URL}",
                url.len()
            )));
        }
        let max_chars = opt_arg(&args, "maxChars", "an integer", Value::as_u64)?
            .unwrap_or(DEFAULT_CHARS)
            .clamp(100, MAX_CHARS) as usize;
        let url =
            Url::parse(url).map_err(|e| refuse(format!("`{url}` is not a valid URL: {e}")))?;
        let allow = ctx.cfg.tools.web.fetch.allow_hosts.clone();
        tokio::select! {
            r = bounded(url, allow, max_chars, LIMITS) => r,
            _ = ctx.cancel.cancelled() => Err(refuse("the run was stopped")),
        }
    }
}

/// [`fetch`] within `limits.time`.
async fn bounded(
    url: Url,
    allow: Vec<String>,
    max_chars: usize,
    limits: Limits,
) -> Result<String, ToolError> {
    match tokio::time::timeout(limits.time, fetch(url, allow, max_chars, limits)).await {
        Ok(r) => r,
        Err(_) => Err(refuse(format!(
            "the fetch took longer than {}s",
            limits.time.as_secs_f64()
        ))),
    }
}

async fn fetch(
    mut url: Url,
    allow: Vec<String>,
    max_chars: usize,
    limits: Limits,
) -> Result<String, ToolError> {
    let refused = Arc::new(Mutex::new(None));
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("switchboard-web-fetch/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(ssrf::GuardedResolver {
            allow: allow.clone(),
            refused: refused.clone(),
        }))
        .build()
        .map_err(|e| ToolError::Fatal(format!("cannot build the HTTP client: {e}")))?;
    let mut hops = 0;
    let resp = loop {
        check_url(&url, &allow)?;
        let sent = client.get(url.clone()).send().await;
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                if let Some(why) = refused.lock().take() {
                    return Err(refuse(format!("refused: {why} (tools.web.fetch.allowHosts lists hosts that may be reached anyway)")));
                }
                return Err(refuse(format!(
                    "fetching {url} failed: {}",
                    error_chain(&e)
                )));
            }
        };
        if !resp.status().is_redirection() {
            break resp;
        }
        let Some(location) = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
        else {
            break resp;
        };
        hops += 1;
        if hops > limits.redirects {
            return Err(refuse(format!("more than {} redirects", limits.redirects)));
        }
        url = url
            .join(location)
            .map_err(|e| refuse(format!("bad redirect location {location:?}: {e}")))?;
    };
    let status = resp.status();
    let final_url = resp.url().to_string();
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let (body, cut_body) = read_body(resp, limits.body).await?;
    let is_html = content_type.contains("html");
    let textual = is_html
        || content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || (content_type.is_empty() && !body.contains(&0));
    if !textual {
        return Err(refuse(format!(
            "{final_url} is not text (Content-Type: {content_type}); web_fetch returns text and HTML pages only"
        )));
    }
    let raw = String::from_utf8_lossy(&body).into_owned();
    drop(body);
    let text = if is_html {
        html::to_markdown(raw, SKIPPED_TAGS)
            .await
            .map_err(|e| refuse(format!("cannot convert the HTML: {e}")))?
    } else {
        raw
    };
    let total = text.chars().count();
    let truncated = total > max_chars || cut_body;
    let text: String = text.chars().take(max_chars).collect();
    let v = json!({
        "url": final_url,
        "status": status.as_u16(),
        "contentType": content_type,
        "truncated": truncated,
        "note": if truncated {
            let cut = if cut_body {
                format!(", body cut at {} MB", limits.body / (1024 * 1024))
            } else {
                String::new()
            };
            format!("cut to {} characters (of {total}{cut})", text.chars().count())
        } else {
            String::new()
        },
    });
    // Within the run's result limit, as valid JSON.
    Ok(super::exec::output::fit_json(v, "text", text))
}

/// The scheme, and an IP-literal host (which no resolver sees), checked before each hop.
fn check_url(url: &Url, allow: &[String]) -> Result<(), ToolError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse(format!(
            "only http and https URLs can be fetched, not {}:",
            url.scheme()
        )));
    }
    let Some(host) = url.host_str() else {
        return Err(refuse(format!("{url} has no host")));
    };
    if ssrf::host_allowed(allow, host) {
        return Ok(());
    }
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = literal.parse::<IpAddr>() {
        if let Some(why) = ssrf::forbidden(ip) {
            return Err(refuse(format!(
                "refused: {host} is {why} (tools.web.fetch.allowHosts lists hosts that may be reached anyway)"
            )));
        }
    }
    Ok(())
}

/// At most `max` bytes of the body, and whether there was more.
async fn read_body(mut resp: reqwest::Response, max: usize) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| refuse(format!("reading the page failed: {}", error_chain(&e))))?
    {
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(&format!(": {s}"));
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that takes the connection and never answers: the fetch ends at its time
    /// limit with a clear error. Catches: a fetch (or its body read) that waits forever.
    #[tokio::test]
    async fn a_silent_server_is_given_up_on_at_the_time_limit() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let limits = Limits {
            time: Duration::from_millis(300),
            ..LIMITS
        };
        let url = Url::parse(&format!("http://{addr}/slow")).expect("url");
        let started = std::time::Instant::now();
        let r = bounded(url, vec!["127.0.0.1".into()], 1000, limits).await;
        held.abort();
        match r {
            Err(ToolError::Model(m)) => assert!(m.contains("took longer than 0.3s"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
