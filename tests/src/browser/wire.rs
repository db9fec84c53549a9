//! The WebDriver wire: one HTTP command with its JSON envelope and errors, the session it
//! belongs to, and element references.

use anyhow::{anyhow, bail, Context as _};
use reqwest::Method;
use serde_json::{json, Value};

/// The key under which W3C WebDriver returns element references (the "web element
/// identifier" of the W3C spec, §12.1; chromedriver answers with exactly this key).
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// One WebDriver session: the HTTP client and the session's base URL.
#[derive(Clone)]
pub(super) struct Session {
    pub(super) http: reqwest::Client,
    /// `http://127.0.0.1:PORT/session/ID`
    pub(super) url: String,
}

impl Session {
    /// Sends one command and returns its `value`, turning WebDriver errors into `anyhow` errors.
    pub(super) async fn cmd(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        command(&self.http, method, &format!("{}{path}", self.url), body).await
    }
}

pub(super) async fn command(
    http: &reqwest::Client,
    method: Method,
    url: &str,
    body: Option<Value>,
) -> anyhow::Result<Value> {
    let mut req = http.request(method.clone(), url);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req
        .send()
        .await
        .with_context(|| format!("webdriver {method} {url}"))?;
    let status = resp.status();
    let mut body: Value = resp
        .json()
        .await
        .with_context(|| format!("webdriver {method} {url}: reading the JSON answer"))?;
    let value = body
        .get_mut("value")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if !status.is_success() {
        let error = value
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown error");
        let message = value.get("message").and_then(Value::as_str).unwrap_or("");
        bail!("webdriver {method} {url} failed ({status}): {error}: {message}");
    }
    Ok(value)
}

pub(super) fn locator(css: &str) -> Value {
    json!({ "using": "css selector", "value": css })
}

/// An element of the current page, as a WebDriver reference.
#[derive(Clone)]
pub struct Element {
    session: Session,
    id: String,
}

impl std::fmt::Debug for Element {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Element").field("id", &self.id).finish()
    }
}

impl Element {
    pub(super) fn from_value(session: &Session, v: &Value) -> anyhow::Result<Element> {
        let id = v
            .get(ELEMENT_KEY)
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("not an element reference: {v}"))?;
        Ok(Element {
            session: session.clone(),
            id: id.to_owned(),
        })
    }

    async fn cmd(&self, method: Method, path: &str, body: Option<Value>) -> anyhow::Result<Value> {
        self.session
            .cmd(method, &format!("/element/{}{path}", self.id), body)
            .await
    }

    /// Types `text` into the element (use [`keys`] for Enter, Shift, …).
    pub async fn send_keys(&self, text: &str) -> anyhow::Result<()> {
        self.cmd(Method::POST, "/value", Some(json!({ "text": text })))
            .await
            .map(drop)
    }

    /// Clicks the element.
    pub async fn click(&self) -> anyhow::Result<()> {
        self.cmd(Method::POST, "/click", Some(json!({})))
            .await
            .map(drop)
    }

    /// Empties an input or textarea.
    pub async fn clear(&self) -> anyhow::Result<()> {
        self.cmd(Method::POST, "/clear", Some(json!({})))
            .await
            .map(drop)
    }

    /// The element's rendered text.
    pub async fn text(&self) -> anyhow::Result<String> {
        let v = self.cmd(Method::GET, "/text", None).await?;
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("element text is not a string: {v}"))
    }

    /// A DOM property, e.g. `value` of an input or `className`.
    pub async fn property(&self, name: &str) -> anyhow::Result<Value> {
        self.cmd(Method::GET, &format!("/property/{name}"), None)
            .await
    }
}
