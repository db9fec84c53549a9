//! The supervisor of one MCP server: connect, list its tools, keep them while the
//! connection lives (re-listing them when the server says its list changed), and when it
//! fails to start or dies, drop its tools and try again with backoff (1 s doubling to
//! 60 s), logged and counted. It stops, killing a stdio server's process group, when its
//! cancel token fires (config change, shutdown).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::PaginatedRequestParams;
use tokio::io::AsyncReadExt;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::connect::{connect, Client, Connection};
use super::names;
use super::tool::McpTool;
use crate::agent::tools::Tool;
use crate::config::McpServerConfig;

/// A connection that lived this long resets the backoff.
const HEALTHY: Duration = Duration::from_secs(60);
/// Most tools taken from one server, and most pages of its list read.
const MAX_TOOLS: usize = 256;
const MAX_PAGES: usize = 16;
/// How long a closing connection may take before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// Longest stderr line of a server logged.
const MAX_LOG_LINE: usize = 512;

/// Where a server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Starting,
    Ready,
    /// Waiting before the next try (after a failed start or a death).
    Restarting,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Ready => "ready",
            State::Restarting => "restarting",
        }
    }
}

/// A server's state, tools and counters, shared with the hub (for `/status`, `/metrics`,
/// the API and the tool list).
pub struct Slot {
    pub name: Arc<str>,
    pub transport: &'static str,
    pub restarts: AtomicU64,
    inner: Mutex<SlotInner>,
}

struct SlotInner {
    state: State,
    tools: Vec<(String, Arc<dyn Tool>)>,
    last_error: Option<String>,
    pid: Option<u32>,
}

/// A snapshot of one server for people.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    pub transport: &'static str,
    pub state: State,
    pub tools: Vec<String>,
    pub restarts: u64,
    pub last_error: Option<String>,
    pub pid: Option<u32>,
}

impl Slot {
    pub fn new(name: &str, cfg: &McpServerConfig) -> Arc<Slot> {
        Arc::new(Slot {
            name: Arc::from(name),
            transport: if cfg.command.is_some() {
                "stdio"
            } else {
                "http"
            },
            restarts: AtomicU64::new(0),
            inner: Mutex::new(SlotInner {
                state: State::Starting,
                tools: Vec::new(),
                last_error: None,
                pid: None,
            }),
        })
    }

    pub fn tools(&self) -> Vec<(String, Arc<dyn Tool>)> {
        self.inner.lock().tools.clone()
    }

    pub fn status(&self) -> ServerStatus {
        let inner = self.inner.lock();
        ServerStatus {
            name: self.name.to_string(),
            transport: self.transport,
            state: inner.state,
            tools: inner.tools.iter().map(|(n, _)| n.clone()).collect(),
            restarts: self.restarts.load(Ordering::Relaxed),
            last_error: inner.last_error.clone(),
            pid: inner.pid,
        }
    }

    fn set(&self, state: State, tools: Vec<(String, Arc<dyn Tool>)>, error: Option<String>) {
        let mut inner = self.inner.lock();
        inner.state = state;
        inner.tools = tools;
        if error.is_some() {
            inner.last_error = error;
        }
    }

    fn set_pid(&self, pid: Option<u32>) {
        self.inner.lock().pid = pid;
    }
}

/// What a supervisor needs besides its slot.
pub struct Supervised {
    pub cfg: McpServerConfig,
    /// A stdio server's whole environment.
    pub env: Vec<(String, String)>,
    pub state_dir: PathBuf,
    /// Bumped on every change of the tools (the registry's spec cache and logs key on it).
    pub generation: Arc<AtomicU64>,
    /// The hub's tracker (cancellations of dropped calls run on it).
    pub tasks: tokio_util::task::TaskTracker,
}

/// Run one server until `cancel` fires.
pub async fn supervise(slot: Arc<Slot>, s: Supervised, cancel: CancellationToken) {
    let name = slot.name.clone();
    // Failures in a row, for the daemon's one backoff policy (1 s doubling to a minute).
    let mut failures: u32 = 0;
    loop {
        slot.set(State::Starting, Vec::new(), None);
        let list_changed = Arc::new(Notify::new());
        let client = Client {
            list_changed: list_changed.clone(),
        };
        let started = Instant::now();
        let connected = tokio::select! {
            c = connect(&s.cfg, &s.env, &s.state_dir, client) => c,
            _ = cancel.cancelled() => return,
        };
        let error = match connected {
            Ok(conn) => {
                tracing::info!(server = %name, transport = slot.transport, "mcp: connected");
                let why = serve(&slot, &s, conn, &list_changed, &cancel).await;
                if cancel.is_cancelled() {
                    slot.set(State::Starting, Vec::new(), None);
                    bump(&s.generation);
                    tracing::info!(server = %name, "mcp: stopped");
                    return;
                }
                if started.elapsed() >= HEALTHY {
                    failures = 0;
                }
                why
            }
            Err(e) => e.to_string(),
        };
        slot.restarts.fetch_add(1, Ordering::Relaxed);
        slot.set(State::Restarting, Vec::new(), Some(error.clone()));
        slot.set_pid(None);
        bump(&s.generation);
        failures = failures.saturating_add(1);
        let backoff = switchboard_channels::backoff::CONNECT.delay(failures);
        tracing::warn!(server = %name, error = %error, retry_in = ?backoff, "mcp: server failed or stopped; its tools are removed until it is back");
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = cancel.cancelled() => return,
        }
    }
}

fn bump(generation: &AtomicU64) -> u64 {
    generation.fetch_add(1, Ordering::SeqCst) + 1
}

/// Serve a live connection: list the tools, re-list them on `list_changed`, log stderr;
/// returns why it ended (after `cancel`: the connection is closed and the child killed).
async fn serve(
    slot: &Slot,
    s: &Supervised,
    conn: Connection,
    list_changed: &Notify,
    cancel: &CancellationToken,
) -> String {
    let Connection { service, child } = conn;
    let mut child = child;
    let stderr = child.as_mut().and_then(|c| c.stderr.take());
    slot.set_pid(child.as_ref().and_then(|c| c.pid()));
    let peer = service.peer().clone();
    let stop = service.cancellation_token();
    let done = service.waiting();
    tokio::pin!(done);
    let log = log_stderr(&slot.name, stderr);
    tokio::pin!(log);
    let mut refresh = true;
    let mut closed = false;
    let why = loop {
        if refresh {
            refresh = false;
            match list_tools(&peer).await {
                Ok(tools) => {
                    let generation = bump(&s.generation);
                    let offered = adapt(&slot.name, &tools, &peer, s, generation);
                    tracing::info!(server = %slot.name, tools = offered.len(), generation, "mcp: tools listed");
                    slot.set(State::Ready, offered, None);
                }
                Err(e) => {
                    stop.cancel();
                    break format!("cannot list its tools: {e}");
                }
            }
        }
        tokio::select! {
            _ = &mut done => {
                closed = true;
                break "the connection closed".to_string();
            }
            _ = list_changed.notified() => refresh = true,
            _ = &mut log => {}
            _ = cancel.cancelled() => {
                stop.cancel();
                break "stopped".to_string();
            }
        }
    };
    if !closed {
        let _ = tokio::time::timeout(CLOSE_GRACE, &mut done).await;
    }
    if let Some(mut c) = child {
        c.kill().await;
    }
    why
}

/// Every tool of the server, page by page, bounded.
async fn list_tools(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
) -> Result<Vec<rmcp::model::Tool>, rmcp::ServiceError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let page = peer
            .list_tools(Some(PaginatedRequestParams { meta: None, cursor }))
            .await?;
        tools.extend(page.tools);
        cursor = page.next_cursor;
        if cursor.is_none() || tools.len() >= MAX_TOOLS {
            break;
        }
    }
    tools.truncate(MAX_TOOLS);
    Ok(tools)
}

fn adapt(
    server: &Arc<str>,
    tools: &[rmcp::model::Tool],
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
    s: &Supervised,
    generation: u64,
) -> Vec<(String, Arc<dyn Tool>)> {
    let raw: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names::offered(server, &raw)
        .into_iter()
        .zip(tools)
        .map(|(name, tool)| {
            let t: Arc<dyn Tool> = Arc::new(McpTool::new(
                name.clone(),
                server.clone(),
                tool,
                peer.clone(),
                s.cfg.timeout,
                generation,
                s.tasks.clone(),
            ));
            (name, t)
        })
        .collect()
}

/// Log a stdio server's stderr, line by line (lines cut at [`MAX_LOG_LINE`]); never ends
/// on its own while there is something to read (pending forever once there is not).
async fn log_stderr(server: &str, stderr: Option<tokio::process::ChildStderr>) {
    let Some(mut stderr) = stderr else {
        return std::future::pending().await;
    };
    let mut buf = vec![0u8; 4096];
    let mut line = Vec::new();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return std::future::pending().await,
            Ok(n) => n,
        };
        for b in &buf[..n] {
            if *b == b'\n' {
                tracing::info!(server, "mcp stderr: {}", String::from_utf8_lossy(&line));
                line.clear();
            } else if line.len() < MAX_LOG_LINE {
                line.push(*b);
            }
        }
    }
}
