//! Starting the daemon process: its command line and environment, the ready line on stdout,
//! stderr into the shared log, and the error when it exits before it is ready.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::log::{strip_ansi, Log, LogMark};
use super::{http_client, Gateway, DRAIN_TIMEOUT, READY_PREFIX, WEB_CHAT_PREFIX};

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

/// A started process whose ready line the harness has not seen yet.
pub(super) struct Pending {
    /// The base URL of the ready line, and the `web chat:` line printed before it.
    ready: oneshot::Receiver<(String, Option<String>)>,
    stdout: Arc<Log>,
    stderr_mark: LogMark,
}

impl Gateway {
    /// Starts the process and waits for the ready line.
    pub(super) async fn spawn(&mut self) -> anyhow::Result<()> {
        self.launch().await?;
        self.wait_ready().await
    }

    /// Starts the process without waiting for its ready line (a standby prints it only once
    /// it takes over); then [`Gateway::wait_ready`]. Until then the process can be
    /// signalled, killed and waited for, but has no base URL.
    pub(super) async fn launch(&mut self) -> anyhow::Result<()> {
        tokio::fs::create_dir_all(self.home_dir()).await?;
        // The same environment as every CLI call of the test (`Gateway::command`).
        let mut cmd = self.command();
        cmd.arg("run").arg("--config").arg(&self.config_path);
        let stderr_mark = self.log.mark();
        let mut child =
            spawn_retrying(&mut cmd).with_context(|| format!("starting {}", self.bin.display()))?;

        let (ready_tx, ready_rx) = oneshot::channel();
        let stdout_lines = Arc::new(Log::default());
        if let Some(out) = child.stdout.take() {
            let stdout_lines = stdout_lines.clone();
            self.readers.spawn(async move {
                let mut ready_tx = Some(ready_tx);
                let mut web_chat = None;
                let mut lines = BufReader::new(out).lines();
                // Keep reading after the ready line so the pipe never fills up.
                while let Ok(Some(line)) = lines.next_line().await {
                    let line = strip_ansi(&line);
                    if line.trim().starts_with(WEB_CHAT_PREFIX) {
                        web_chat = Some(line.trim().to_owned());
                    }
                    if let Some(url) = line.trim().strip_prefix(READY_PREFIX) {
                        if let Some(tx) = ready_tx.take() {
                            let _ = tx.send((url.trim().to_owned(), web_chat.take()));
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
        self.child = Some(child);
        self.pending = Some(Pending {
            ready: ready_rx,
            stdout: stdout_lines,
            stderr_mark,
        });
        Ok(())
    }

    /// Waits (up to the builder's ready timeout) for the ready line of a process started
    /// with [`GatewayBuilder::launch`](super::GatewayBuilder::launch); returns at once if it
    /// was seen already. If the process exits first, the error is an [`EarlyExit`].
    pub async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let ready = tokio::time::timeout(self.ready_timeout, pending.ready).await;
        let (url, web_chat) = match ready {
            Ok(Ok(ready)) => ready,
            outcome => {
                let Some(mut child) = self.child.take() else {
                    bail!("the gateway is not running");
                };
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
                    stdout: pending.stdout.lines(),
                    stderr: self.log.lines_since(pending.stderr_mark),
                }
                .into());
            }
        };
        if !url.starts_with("http://") && !url.starts_with("https://") {
            bail!("the ready line names no http URL: {READY_PREFIX}{url}");
        }
        self.base_url = url.trim_end_matches('/').to_owned();
        self.use_token(web_chat.as_deref())
    }

    /// The token the daemon says it uses on its `web chat:` line: the link with the token
    /// it just made, or the file holding the one it made before (its state dir may not be
    /// the harness's: a test can point `SWITCHBOARD_STATE_DIR` elsewhere). That token is
    /// sent on every request of [`Gateway::http`] and in the socket and page URLs; a
    /// configured one is the test's to send, and `mode: "none"` needs none.
    fn use_token(&mut self, web_chat: Option<&str>) -> anyhow::Result<()> {
        self.web_chat_line = web_chat.map(str::to_owned);
        self.token = match web_chat {
            Some(line) if line.contains("<gateway.auth.token>") => None,
            Some(line) => match (line.split_once("?token="), line.split_once("(token in ")) {
                (Some((_, token)), _) => Some(token.trim().to_owned()),
                (None, Some((_, rest))) => {
                    let path = rest.split("; ").next().unwrap_or(rest).trim();
                    let text = std::fs::read_to_string(path)
                        .with_context(|| format!("reading the daemon's token {path}"))?;
                    Some(text.trim().to_owned())
                }
                (None, None) => None,
            },
            None => None,
        };
        self.http = http_client(self.token.as_deref())?;
        Ok(())
    }

    /// Whether the process printed its ready line (checked without waiting).
    pub fn is_ready(&mut self) -> bool {
        match self.pending.as_mut().map(|p| p.ready.try_recv()) {
            None => true,
            Some(Ok((url, web_chat))) => {
                self.base_url = url.trim_end_matches('/').to_owned();
                self.pending = None;
                // The daemon wrote its token before it printed either line.
                if let Err(e) = self.use_token(web_chat.as_deref()) {
                    self.log.push(format!("--- harness: {e:#} ---"));
                }
                true
            }
            Some(Err(_)) => false,
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
