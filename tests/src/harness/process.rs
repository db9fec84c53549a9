//! Starting the daemon process: its command line and environment, the ready line on stdout,
//! stderr into the shared log, and the error when it exits before it is ready.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::log::{strip_ansi, Log};
use super::{Gateway, DRAIN_TIMEOUT, READY_PREFIX};

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

impl Gateway {
    /// Starts the process and waits for the ready line.
    pub(super) async fn spawn(&mut self) -> anyhow::Result<()> {
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
