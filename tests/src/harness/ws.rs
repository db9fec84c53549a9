//! A web chat client over tokio-tungstenite that speaks the gateway's `/ws` JSON protocol.

use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use futures::{SinkExt as _, StreamExt as _};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long the WebSocket handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One web chat connection.
pub struct WsClient {
    stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl WsClient {
    /// Connects to a `ws://…/ws?chat=…` URL (see `Gateway::ws_url`; add `&token=…` if needed).
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let request = url
            .into_client_request()
            .with_context(|| format!("bad ws url {url}"))?;
        Self::connect_request(request).await
    }

    /// Connects with an `Authorization: Bearer <token>` header.
    pub async fn connect_with_bearer(url: &str, token: &str) -> anyhow::Result<Self> {
        let mut request = url
            .into_client_request()
            .with_context(|| format!("bad ws url {url}"))?;
        let value = HeaderValue::from_str(&format!("Bearer {token}")).context("bearer token")?;
        request.headers_mut().insert("authorization", value);
        Self::connect_request(request).await
    }

    async fn connect_request(
        request: tokio_tungstenite::tungstenite::handshake::client::Request,
    ) -> anyhow::Result<Self> {
        let url = request.uri().to_string();
        let (stream, _response) =
            tokio::time::timeout(CONNECT_TIMEOUT, tokio_tungstenite::connect_async(request))
                .await
                .with_context(|| format!("connecting to {url} timed out"))?
                .with_context(|| format!("connecting to {url}"))?;
        Ok(WsClient { stream })
    }

    /// Sends a chat message: `{"type":"message","text":…}`.
    pub async fn send_text(&mut self, text: &str) -> anyhow::Result<()> {
        self.send_raw(&json!({ "type": "message", "text": text }).to_string())
            .await
    }

    /// Sends a text frame exactly as given (for malformed-input tests).
    pub async fn send_raw(&mut self, raw: &str) -> anyhow::Result<()> {
        self.stream
            .send(Message::text(raw))
            .await
            .context("sending a ws frame")
    }

    /// The next JSON text frame, whatever its type. Errors on timeout, on close and on a frame
    /// that is not JSON.
    pub async fn next_frame(&mut self, timeout: Duration) -> anyhow::Result<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let msg = tokio::time::timeout_at(deadline, self.stream.next())
                .await
                .map_err(|_| anyhow!("no ws frame within {timeout:?}"))?;
            match msg {
                None => bail!("the ws connection ended"),
                Some(Err(err)) => return Err(err).context("reading a ws frame"),
                Some(Ok(Message::Text(text))) => {
                    return serde_json::from_str(text.as_str())
                        .with_context(|| format!("ws frame is not JSON: {}", text.as_str()));
                }
                Some(Ok(Message::Close(frame))) => bail!("the gateway closed the ws: {frame:?}"),
                Some(Ok(Message::Binary(bytes))) => {
                    bail!("unexpected binary ws frame ({} bytes)", bytes.len())
                }
                // Ping/pong are control frames; tungstenite answers pings itself.
                Some(Ok(_)) => {}
            }
        }
    }

    /// Skips frames until one with `"type": ty` arrives and returns it whole.
    pub async fn next_of_type(&mut self, ty: &str, timeout: Duration) -> anyhow::Result<Value> {
        let deadline = Instant::now() + timeout;
        let mut skipped = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.next_frame(left).await.with_context(|| {
                format!("waiting for a {ty:?} frame; skipped: {}", render(&skipped))
            })?;
            if frame.get("type").and_then(Value::as_str) == Some(ty) {
                return Ok(frame);
            }
            skipped.push(frame);
        }
    }

    /// The text of the next assistant `message` frame, skipping `hello`, `typing`, `event`,
    /// `pong` and any other frame types. An `error` frame makes this fail with its text (use
    /// `next_of_type("error", …)` when an error is what the test expects).
    pub async fn next_message(&mut self, timeout: Duration) -> anyhow::Result<String> {
        let deadline = Instant::now() + timeout;
        let mut skipped = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.next_frame(left).await.with_context(|| {
                format!("waiting for a message frame; skipped: {}", render(&skipped))
            })?;
            match frame.get("type").and_then(Value::as_str) {
                Some("message") => {
                    return frame
                        .get("text")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| anyhow!("message frame without text: {frame}"));
                }
                Some("error") => bail!(
                    "the gateway sent an error frame: {}",
                    frame
                        .get("error")
                        .and_then(Value::as_str)
                        .unwrap_or("(no error text)")
                ),
                _ => skipped.push(frame),
            }
        }
    }

    /// Waits until the gateway ends the connection: a Close frame (its code is returned),
    /// the stream ending, or the connection reset (`None`). An error if a text or binary
    /// frame comes first, or if the connection is still open after `timeout`: a socket
    /// that merely went quiet is not a closed one.
    pub async fn closed(&mut self, timeout: Duration) -> anyhow::Result<Option<u16>> {
        let deadline = Instant::now() + timeout;
        loop {
            let msg = tokio::time::timeout_at(deadline, self.stream.next())
                .await
                .map_err(|_| anyhow!("the ws connection was still open after {timeout:?}"))?;
            match msg {
                None | Some(Err(_)) => return Ok(None),
                Some(Ok(Message::Close(frame))) => return Ok(frame.map(|f| u16::from(f.code))),
                Some(Ok(Message::Text(text))) => {
                    bail!("a frame came instead of the close: {}", text.as_str())
                }
                Some(Ok(Message::Binary(bytes))) => {
                    bail!(
                        "a binary frame ({} bytes) came instead of the close",
                        bytes.len()
                    )
                }
                Some(Ok(_)) => {}
            }
        }
    }

    /// Closes the connection politely.
    pub async fn close(mut self) -> anyhow::Result<()> {
        self.stream.close(None).await.context("closing the ws")
    }
}

fn render(frames: &[Value]) -> String {
    if frames.is_empty() {
        return "(none)".to_owned();
    }
    frames
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
