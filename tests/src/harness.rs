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

mod log;
mod ws;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

pub use self::log::LogMark;
use self::log::{strip_ansi, Log};
pub use self::ws::WsClient;

/// What the daemon prints on stdout, followed by its base URL, once it is ready.
pub const READY_PREFIX: &str = "switchboard listening on ";
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

/// Host variables the daemon would read; removed from the child's environment so nothing from
/// the developer's machine leaks into a test (set them with [`GatewayBuilder::env`] if needed).
const SCRUBBED_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "SWITCHBOARD_CONFIG",
    "SWITCHBOARD_TOKEN",
    "SWITCHBOARD_STATE_DIR",
    "TELEGRAM_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "XDG_CONFIG_HOME",
];

enum StateDir {
    Temp(TempDir),
    Given(PathBuf),
}

impl StateDir {
    fn path(&self) -> &Path {
        match self {
            StateDir::Temp(dir) => dir.path(),
            StateDir::Given(path) => path,
        }
    }
}

/// Builds and starts a [`Gateway`].
pub struct GatewayBuilder {
    bin: PathBuf,
    config: String,
    env: Vec<(String, String)>,
    state_dir: Option<PathBuf>,
    ready_timeout: Duration,
}

impl GatewayBuilder {
    /// A gateway running `bin` (use `env!("CARGO_BIN_EXE_switchboard")`) with
    /// [`DEFAULT_CONFIG`] in a fresh temporary state dir.
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        GatewayBuilder {
            bin: bin.into(),
            config: DEFAULT_CONFIG.to_owned(),
            env: Vec::new(),
            state_dir: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
        }
    }

    /// The JSON5 config text, written to `<state_dir>/config.json5` before start.
    pub fn config(mut self, json5: impl Into<String>) -> Self {
        self.config = json5.into();
        self
    }

    /// Sets an environment variable for the daemon (overrides the harness defaults, e.g.
    /// `RUST_LOG`).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Uses an existing state dir instead of a fresh temporary one (it is not removed).
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// How long to wait for the ready line (default 30 s).
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// Writes the config, starts the daemon and waits for its ready line.
    ///
    /// If the daemon exits first, the error is an [`EarlyExit`] (reachable with
    /// `err.downcast_ref::<EarlyExit>()`) carrying the exit status and everything it printed.
    pub async fn start(self) -> anyhow::Result<Gateway> {
        let state = match self.state_dir {
            Some(dir) => {
                tokio::fs::create_dir_all(&dir)
                    .await
                    .with_context(|| format!("creating state dir {}", dir.display()))?;
                StateDir::Given(dir)
            }
            None => StateDir::Temp(
                tempfile::Builder::new()
                    .prefix("switchboard-e2e-")
                    .tempdir()
                    .context("creating a temporary state dir")?,
            ),
        };
        let config_path = state.path().join("config.json5");
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(HTTP_TIMEOUT)
            .build()
            .context("building the HTTP client")?;
        let mut gateway = Gateway {
            bin: self.bin,
            env: self.env,
            ready_timeout: self.ready_timeout,
            config_path,
            state,
            child: None,
            base_url: String::new(),
            log: Arc::new(Log::default()),
            readers: JoinSet::new(),
            http,
        };
        gateway.write_config(&self.config).await?;
        gateway.spawn().await?;
        Ok(gateway)
    }
}

/// The daemon exited before printing its ready line.
#[derive(Debug)]
pub struct EarlyExit {
    /// `None` if it had to be killed because it neither got ready nor exited in time.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<String>,
    pub stderr: Vec<String>,
}

impl std::fmt::Display for EarlyExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(status) => write!(f, "the gateway exited before it was ready ({status})")?,
            None => write!(f, "the gateway did not print its ready line in time")?,
        }
        write!(f, "\n--- stdout ---")?;
        for line in &self.stdout {
            write!(f, "\n{line}")?;
        }
        write!(f, "\n--- stderr ---")?;
        for line in &self.stderr {
            write!(f, "\n{line}")?;
        }
        Ok(())
    }
}

impl std::error::Error for EarlyExit {}

/// A running `switchboard run` process (killed on drop).
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
    http: reqwest::Client,
}

impl Gateway {
    /// `http://127.0.0.1:PORT` as printed in the ready line. A restart with `port: 0` in the
    /// config gets a new port, so read this again after [`Gateway::restart`].
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// `ws://127.0.0.1:PORT/ws?chat=<chat>`.
    pub fn ws_url(&self, chat: &str) -> String {
        let ws = match self.base_url.strip_prefix("https://") {
            Some(rest) => format!("wss://{rest}"),
            None => format!("ws://{}", self.base_url.trim_start_matches("http://")),
        };
        format!("{ws}/ws?chat={}", query_escape(chat))
    }

    pub fn state_dir(&self) -> &Path {
        self.state.path()
    }

    pub fn config_path(&self) -> &Path {
        &self.config_path
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
        let Some(mut child) = self.child.take() else {
            bail!("the gateway is not running");
        };
        if let Some(status) = child.try_wait()? {
            self.drain_readers().await;
            return Ok(status);
        }
        let pid = child
            .id()
            .ok_or_else(|| anyhow!("the gateway has no pid"))?;
        // `libc`/`nix` are not dependencies; the `kill` utility sends the signal instead.
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .await
            .context("running `kill -TERM`")?;
        if !sent.success() {
            // The process may have exited on its own in the meantime.
            if let Some(status) = child.try_wait()? {
                self.drain_readers().await;
                return Ok(status);
            }
            bail!("`kill -TERM {pid}` failed: {sent}");
        }
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

    /// An HTTP client for the daemon's API (no proxy, 30 s per request).
    pub fn http(&self) -> reqwest::Client {
        self.http.clone()
    }

    /// Starts the process and waits for the ready line.
    async fn spawn(&mut self) -> anyhow::Result<()> {
        let state_dir = self.state.path().to_owned();
        let home = state_dir.join("home");
        tokio::fs::create_dir_all(&home).await?;

        let mut cmd = Command::new(&self.bin);
        cmd.arg("run")
            .arg("--config")
            .arg(&self.config_path)
            .current_dir(&state_dir);
        for key in SCRUBBED_ENV {
            cmd.env_remove(key);
        }
        cmd.env("SWITCHBOARD_STATE_DIR", &state_dir)
            // Agent definitions and other per-user files are looked up under $HOME.
            .env("HOME", &home)
            .env("RUST_LOG", "info,switchboard=debug")
            .env("NO_COLOR", "1");
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child =
            spawn_retrying(&mut cmd).with_context(|| format!("starting {}", self.bin.display()))?;

        let (ready_tx, ready_rx) = oneshot::channel();
        let stdout_lines = Arc::new(Log::default());
        if let Some(out) = child.stdout.take() {
            let stdout_lines = stdout_lines.clone();
            self.readers.spawn(async move {
                let mut ready_tx = Some(ready_tx);
                let mut lines = BufReader::new(out).lines();
                // Keep reading after the ready line so the pipe never fills up.
                while let Ok(Some(line)) = lines.next_line().await {
                    let line = strip_ansi(&line);
                    if let Some(url) = line.trim().strip_prefix(READY_PREFIX) {
                        if let Some(tx) = ready_tx.take() {
                            let _ = tx.send(url.trim().to_owned());
                        }
                    }
                    stdout_lines.push(line);
                }
            });
        }
        if let Some(err) = child.stderr.take() {
            let log = self.log.clone();
            self.readers.spawn(async move {
                let mut lines = BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    log.push(strip_ansi(&line));
                }
            });
        }

        let stderr_mark = self.log.mark();
        let ready = tokio::time::timeout(self.ready_timeout, ready_rx).await;
        let url = match ready {
            Ok(Ok(url)) => url,
            outcome => {
                // Either stdout closed without the ready line (the process is exiting) or the
                // deadline passed (kill it).
                let status = if outcome.is_ok() {
                    tokio::time::timeout(DRAIN_TIMEOUT, child.wait())
                        .await
                        .ok()
                        .transpose()?
                } else {
                    None
                };
                if status.is_none() {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                }
                self.drain_readers().await;
                return Err(EarlyExit {
                    status,
                    stdout: stdout_lines.lines(),
                    stderr: self.log.lines_since(stderr_mark),
                }
                .into());
            }
        };
        if !url.starts_with("http://") && !url.starts_with("https://") {
            bail!("the ready line names no http URL: {READY_PREFIX}{url}");
        }
        self.base_url = url.trim_end_matches('/').to_owned();
        self.child = Some(child);
        Ok(())
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

/// Spawns `cmd`, retrying briefly on ETXTBSY: a test that just wrote an executable (a stand-in
/// script) can race with another thread's fork that briefly holds the file open for writing.
fn spawn_retrying(cmd: &mut Command) -> std::io::Result<Child> {
    const ETXTBSY: i32 = 26;
    let mut attempts = 0;
    loop {
        match cmd.spawn() {
            Err(err) if err.raw_os_error() == Some(ETXTBSY) && attempts < 20 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            other => return other,
        }
    }
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
