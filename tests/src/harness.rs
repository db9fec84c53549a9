//! The fixture that runs the real `switchboard` binary for end-to-end tests: a fresh state dir,
//! a config file, the ready line on stdout, stderr collected for assertions, and kill /
//! terminate / restart.
//!
//! ```ignore
//! let gw = GatewayBuilder::new(env!("CARGO_BIN_EXE_switchboard"))
//!     .config(r#"{ gateway: { port: 0 } }"#)
//!     .start()
//!     .await?;
//! let mut ws = WsClient::connect(&gw.ws_url("main")).await?;
//! ```

mod builder;
mod command;
mod log;
mod process;
mod required;
mod watchdog;
mod ws;

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use tokio::process::{Child, Command};
use tokio::task::JoinSet;

pub use self::builder::GatewayBuilder;
use self::builder::StateDir;
pub use self::command::{command, home_of, output_within, SCRUBBED_ENV};
use self::log::Log;
pub use self::log::LogMark;
pub use self::process::EarlyExit;
pub use self::required::{in_ci, require, which};
pub use self::watchdog::Watch;
pub use self::ws::WsClient;

/// What the daemon prints on stdout, followed by its base URL, once it is ready.
pub const READY_PREFIX: &str = "switchboard listening on ";
/// The line the daemon prints just before the ready line: how to open the web chat, and
/// whether it uses the token it generated.
pub const WEB_CHAT_PREFIX: &str = "web chat: ";
/// The config used when the test does not give one: web chat on a random loopback port.
pub const DEFAULT_CONFIG: &str = "{ gateway: { port: 0 } }";
/// How long the daemon may take to print its ready line.
const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `terminate` waits for a graceful exit after SIGTERM.
const TERMINATE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long to wait for the output readers to reach EOF after the process exited (a stray
/// grandchild could hold the pipes open).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Per-request bound of the client returned by [`Gateway::http`].
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `switchboard run` process (killed on drop).
///
/// It runs as `<bin> run --config <state_dir>/config.json5` in the state dir as its working
/// directory, with `SWITCHBOARD_STATE_DIR=<state_dir>`, `HOME=<state_dir>/home`,
/// `RUST_LOG=info,switchboard=debug`, `NO_COLOR=1`, and without the host's [`SCRUBBED_ENV`]
/// (anything set with [`GatewayBuilder::env`] wins over all of these).
pub struct Gateway {
    bin: PathBuf,
    env: Vec<(String, String)>,
    ready_timeout: Duration,
    state: StateDir,
    config_path: PathBuf,
    child: Option<Child>,
    base_url: String,
    log: Arc<Log>,
    /// stdout/stderr readers of the current process; aborted on drop.
    readers: JoinSet<()>,
    /// Sends the daemon's generated token, when it uses one ([`Gateway::token`]).
    http: reqwest::Client,
    /// The daemon's generated token, read from its state dir once it is ready; `None` when
    /// the config sets one (the test sends it) or `gateway.auth.mode` is `"none"`.
    token: Option<String>,
    /// The `web chat:` line of the current process's start.
    web_chat_line: Option<String>,
    /// This test under the watchdog's time limit while the gateway lives.
    _watch: Watch,
    /// Started, ready line not seen yet ([`GatewayBuilder::launch`]).
    pending: Option<process::Pending>,
}

impl Gateway {
    /// `http://127.0.0.1:PORT` as printed in the ready line. A restart with `port: 0` in the
    /// config gets a new port, so read this again after [`Gateway::restart`].
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// The operators' live event stream (`/api/events`): every session's events; with
    /// `?token=` when the daemon uses its generated token.
    pub fn events_url(&self) -> String {
        match &self.token {
            Some(t) => format!("{}/api/events?token={}", self.ws_base(), query_escape(t)),
            None => format!("{}/api/events", self.ws_base()),
        }
    }

    /// The `web chat: …` line the daemon printed before its ready line at its last start.
    pub fn web_chat_line(&self) -> Option<String> {
        self.web_chat_line.clone()
    }

    /// The token the daemon generated (`<state_dir>/gateway.token`), when it uses it.
    pub fn token(&self) -> Option<String> {
        self.token.clone()
    }

    /// A page's URL (`/`, `/control`) as the operator opens it: with `?token=` when the
    /// daemon uses its generated token (the page keeps it and drops it from the address).
    pub fn page_url(&self, path: &str) -> String {
        match &self.token {
            Some(t) => format!("{}{path}?token={}", self.base_url, query_escape(t)),
            None => format!("{}{path}", self.base_url),
        }
    }

    fn ws_base(&self) -> String {
        match self.base_url.strip_prefix("https://") {
            Some(rest) => format!("wss://{rest}"),
            None => format!("ws://{}", self.base_url.trim_start_matches("http://")),
        }
    }

    /// `ws://127.0.0.1:PORT/ws?chat=<chat>`, with `&token=` when the daemon uses its
    /// generated token.
    pub fn ws_url(&self, chat: &str) -> String {
        let url = format!("{}/ws?chat={}", self.ws_base(), query_escape(chat));
        match &self.token {
            Some(t) => format!("{url}&token={}", query_escape(t)),
            None => url,
        }
    }

    pub fn state_dir(&self) -> &Path {
        self.state.path()
    }

    pub fn config_path(&self) -> &Path {
        &self.config_path
    }

    /// `<state_dir>/home`, the daemon's `$HOME`.
    pub fn home_dir(&self) -> PathBuf {
        home_of(self.state.path())
    }

    /// The binary with this gateway's state dir, `HOME` and environment (the harness's
    /// scrubbed one plus the builder's `env` overrides), no arguments yet: for CLI calls
    /// such as `pairing approve` or `config validate` against this gateway's files. Run it
    /// with [`output_within`].
    pub fn command(&self) -> Command {
        let mut cmd = command(&self.bin, self.state.path());
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd
    }

    /// The process id of the running daemon, if one is running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Replaces the config file atomically (a temp file in the same dir, then a rename), so a
    /// watching daemon never reads half a file.
    pub async fn write_config(&self, json5: &str) -> anyhow::Result<()> {
        let dir = self
            .config_path
            .parent()
            .ok_or_else(|| anyhow!("config path has no parent"))?;
        let tmp = dir.join(format!(".config.json5.{}.tmp", uuid::Uuid::new_v4()));
        tokio::fs::write(&tmp, json5)
            .await
            .with_context(|| format!("writing {}", tmp.display()))?;
        tokio::fs::rename(&tmp, &self.config_path)
            .await
            .with_context(|| format!("renaming into {}", self.config_path.display()))
    }

    /// Everything the daemon wrote to stderr so far (ANSI colours stripped), across restarts;
    /// each restart is marked by a line starting with `--- harness:`.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.log.lines()
    }

    /// A position in the stderr log, for [`Gateway::wait_for_log_since`].
    pub fn log_mark(&self) -> LogMark {
        self.log.mark()
    }

    /// Waits until some stderr line (logged at any time so far) contains `contains`.
    pub async fn wait_for_log(&self, contains: &str, timeout: Duration) -> anyhow::Result<()> {
        self.log
            .wait_for(LogMark::START, contains, timeout)
            .await
            .map(drop)
    }

    /// Waits until a stderr line logged after `mark` contains `contains`; returns that line.
    pub async fn wait_for_log_since(
        &self,
        mark: LogMark,
        contains: &str,
        timeout: Duration,
    ) -> anyhow::Result<String> {
        self.log.wait_for(mark, contains, timeout).await
    }

    /// Kills the daemon with SIGKILL and waits for it (no graceful shutdown: a crash).
    pub async fn kill(&mut self) -> anyhow::Result<()> {
        self.pending = None;
        let Some(mut child) = self.child.take() else {
            bail!("the gateway is not running");
        };
        child.start_kill().context("killing the gateway")?;
        tokio::time::timeout(TERMINATE_TIMEOUT, child.wait())
            .await
            .context("the gateway did not die after SIGKILL")??;
        self.drain_readers().await;
        Ok(())
    }

    /// Sends SIGTERM and waits up to 30 s for the daemon to exit; returns its exit status.
    pub async fn terminate(&mut self) -> anyhow::Result<ExitStatus> {
        let Some(child) = self.child.as_mut() else {
            bail!("the gateway is not running");
        };
        if child.try_wait()?.is_none() {
            self.sigterm().await?;
        }
        self.wait_exit().await
    }

    /// Sends SIGTERM without waiting for the exit (the daemon begins its graceful
    /// shutdown); then [`Gateway::wait_exit`] or [`Gateway::terminate`].
    pub async fn sigterm(&mut self) -> anyhow::Result<()> {
        let Some(child) = self.child.as_mut() else {
            bail!("the gateway is not running");
        };
        let pid = child
            .id()
            .ok_or_else(|| anyhow!("the gateway has no pid"))?;
        // `libc`/`nix` are not dependencies; the `kill` utility sends the signal instead.
        let sent = tokio::time::timeout(
            TERMINATE_TIMEOUT,
            Command::new("kill")
                .arg("-TERM")
                .arg(pid.to_string())
                .status(),
        )
        .await
        .context("`kill -TERM` did not return")?
        .context("running `kill -TERM`")?;
        // A failure means the process is gone already; `wait_exit` reports its status.
        if !sent.success() && child.try_wait()?.is_none() {
            bail!("`kill -TERM {pid}` failed: {sent}");
        }
        Ok(())
    }

    /// Waits up to 30 s for the daemon to exit (after [`Gateway::sigterm`]); returns its
    /// exit status. Past the bound it is killed and this is an error.
    pub async fn wait_exit(&mut self) -> anyhow::Result<ExitStatus> {
        self.pending = None;
        let Some(mut child) = self.child.take() else {
            bail!("the gateway is not running");
        };
        match tokio::time::timeout(TERMINATE_TIMEOUT, child.wait()).await {
            Ok(status) => {
                let status = status.context("waiting for the gateway")?;
                self.drain_readers().await;
                Ok(status)
            }
            Err(_) => {
                let _ = child.start_kill();
                let _ = child.wait().await;
                self.drain_readers().await;
                bail!(
                    "the gateway did not exit within {TERMINATE_TIMEOUT:?} of SIGTERM (killed it); stderr:\n{}",
                    self.log.lines().join("\n")
                )
            }
        }
    }

    /// Starts the same binary again with the same state dir, config file and environment
    /// (after [`Gateway::kill`] or [`Gateway::terminate`]) and waits for its ready line.
    pub async fn restart(&mut self) -> anyhow::Result<()> {
        if let Some(child) = self.child.as_mut() {
            if child.try_wait()?.is_none() {
                bail!("the gateway is still running: kill() or terminate() it before restart()");
            }
            self.child = None;
            self.drain_readers().await;
        }
        self.log
            .push("--- harness: restarting the gateway ---".to_owned());
        self.spawn().await
    }

    /// An HTTP client for the daemon's API (no proxy, 30 s per request), sending
    /// `Authorization: Bearer` with the daemon's generated token when it uses one (a
    /// request's own `Authorization` wins).
    pub fn http(&self) -> reqwest::Client {
        self.http.clone()
    }

    /// An HTTP client like [`Gateway::http`] that sends no token: what any other local
    /// user or process would use.
    pub fn bare_http(&self) -> reqwest::Client {
        // Building a client without headers cannot fail short of a broken TLS setup;
        // fall back to the default one then.
        http_client(None).unwrap_or_default()
    }

    /// Lets the output readers of an exited process reach EOF, so the log is complete.
    async fn drain_readers(&mut self) {
        let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
            while self.readers.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            self.readers.abort_all();
        }
    }
}

/// The client of [`Gateway::http`]: no proxy, 30 s per request, the bearer token if any.
fn http_client(token: Option<&str>) -> anyhow::Result<reqwest::Client> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(t) = token {
        let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {t}"))
            .context("the daemon's token is not a header value")?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    reqwest::Client::builder()
        .no_proxy()
        .timeout(HTTP_TIMEOUT)
        .default_headers(headers)
        .build()
        .context("building the HTTP client")
}

/// Percent-encodes a query value (everything but unreserved characters).
fn query_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
