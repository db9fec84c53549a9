//! Connecting to one MCP server: a stdio child (its own process group, killed with the
//! connection, its environment built rather than inherited, its stdout read with a bound
//! on one message) or a streamable HTTP endpoint (its headers on every request), then
//! MCP's start handshake, bounded by the server's `timeout`.

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rmcp::model::{ClientCapabilities, ClientInfo, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use rustix::process::{kill_process_group, Pid, Signal};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStderr};
use tokio::sync::Notify;

use crate::config::McpServerConfig;

/// Largest single message a stdio server may send (a longer line closes the connection:
/// the call waiting for it fails and the server is restarted).
pub const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// The client side of one connection: tells the supervisor when the server's tool list
/// changed.
#[derive(Clone)]
pub struct Client {
    pub list_changed: Arc<Notify>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientInfo {
        ClientInfo {
            meta: None,
            protocol_version: Default::default(),
            capabilities: ClientCapabilities::default(),
            client_info: Implementation {
                name: "switchboard".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                ..Implementation::default()
            },
        }
    }
}

pub type Service = RunningService<RoleClient, Client>;

/// A connected server: the MCP session, and for a stdio server its child process.
pub struct Connection {
    pub service: Service,
    pub child: Option<ChildGuard>,
}

/// A stdio server's process: its whole group is killed when this is dropped.
pub struct ChildGuard {
    pub child: Child,
    pub stderr: Option<ChildStderr>,
}

impl ChildGuard {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Kill the server and everything it started, and reap it.
    pub async fn kill(&mut self) {
        self.kill_group();
        let _ = self.child.kill().await;
    }

    fn kill_group(&self) {
        if let Some(pid) = self
            .child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .and_then(Pid::from_raw)
        {
            // ESRCH (already gone) is the usual answer once it exited.
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        // `kill_on_drop` kills the child itself; this takes its children with it.
        self.kill_group();
    }
}

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot start `{0}`: {1}")]
    Spawn(String, std::io::Error),
    #[error("bad HTTP headers: {0}")]
    Headers(String),
    #[error("cannot build the HTTP client: {0}")]
    Http(String),
    #[error("no answer to the start handshake within {0}")]
    Timeout(String),
    #[error("the start handshake failed: {0}")]
    Handshake(String),
}

/// Connect to the server `cfg` describes. `env`: a stdio server's whole environment;
/// `state_dir`: its working directory unless `cwd` is set.
pub async fn connect(
    cfg: &McpServerConfig,
    env: &[(String, String)],
    state_dir: &Path,
    client: Client,
) -> Result<Connection, ConnectError> {
    let within = |what| ConnectError::Timeout(humantime::format_duration(what).to_string());
    if let Some(command) = &cfg.command {
        let mut cmd = tokio::process::Command::new(command);
        crate::children::die_with_daemon(&mut cmd);
        let mut child = cmd
            .args(&cfg.args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cfg.cwd.as_deref().unwrap_or(state_dir))
            .process_group(0)
            .kill_on_drop(true)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| ConnectError::Spawn(command.clone(), e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ConnectError::Spawn(
                command.clone(),
                std::io::Error::other("no pipes to the child"),
            ));
        };
        let stderr = child.stderr.take();
        let mut guard = ChildGuard { child, stderr };
        let serve = client.serve((LineBound::new(stdout, MAX_MESSAGE), stdin));
        let service = match tokio::time::timeout(cfg.timeout, serve).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                guard.kill().await;
                return Err(ConnectError::Handshake(e.to_string()));
            }
            Err(_) => {
                guard.kill().await;
                return Err(within(cfg.timeout));
            }
        };
        return Ok(Connection {
            service,
            child: Some(guard),
        });
    }
    let url = cfg.url.clone().unwrap_or_default();
    let mut headers = reqwest::header::HeaderMap::new();
    for (k, v) in &cfg.headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| ConnectError::Headers(format!("{k:?} is not a header name")))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|_| ConnectError::Headers(format!("the value of {k} is not valid")))?;
        headers.insert(name, value);
    }
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .connect_timeout(cfg.timeout)
        .build()
        .map_err(|e| ConnectError::Http(e.to_string()))?;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    match tokio::time::timeout(cfg.timeout, client.serve(transport)).await {
        Ok(Ok(service)) => Ok(Connection {
            service,
            child: None,
        }),
        Ok(Err(e)) => Err(ConnectError::Handshake(e.to_string())),
        Err(_) => Err(within(cfg.timeout)),
    }
}

/// A reader that fails once a line (one JSON-RPC message) grows past `max` bytes, so a
/// server cannot make the gateway buffer without bound.
pub struct LineBound<R> {
    inner: R,
    max: usize,
    line: usize,
}

impl<R> LineBound<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineBound {
            inner,
            max,
            line: 0,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineBound<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                for b in &buf.filled()[before..] {
                    if *b == b'\n' {
                        this.line = 0;
                    } else {
                        this.line += 1;
                    }
                }
                if this.line > this.max {
                    buf.set_filled(before);
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("a message from the server is over {} bytes", this.max),
                    )));
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// A line past the bound is an error; lines under it pass whole. Catches: a server
    /// that never sends a newline making the gateway buffer without end.
    #[tokio::test]
    async fn a_line_over_the_bound_is_an_error() {
        let data = b"short\nanother line\n".to_vec();
        let mut ok = LineBound::new(&data[..], 16);
        let mut out = Vec::new();
        assert!(ok.read_to_end(&mut out).await.is_ok());
        assert_eq!(out, data);
        let long = [b'x'; 100];
        let mut bad = LineBound::new(&long[..], 16);
        let err = bad.read_to_end(&mut Vec::new()).await.err();
        assert_eq!(err.map(|e| e.kind()), Some(std::io::ErrorKind::InvalidData));
    }
}
