//! One running command: `sh -c` (or a checked argv) in its own process group, stdout and stderr into one pipe
//! (so they interleave as written), driven by a task that captures the output, enforces
//! the timeout, and kills the whole group when the command ends, times out, is killed or
//! the gateway shuts down — a command that forked a sleeper leaves no orphan behind.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, Pid, Signal};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::output::Capture;
use crate::children::{Child, Exit};

/// How long the output pipe is drained after the command's group was killed.
const DRAIN: Duration = Duration::from_secs(2);
/// Read size of the output pipe.
const CHUNK: usize = 64 * 1024;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Exited(Option<i32>),
    /// Ended by a signal it did not get from us.
    Signalled(i32),
    TimedOut(Duration),
    /// `process kill`, `/stop`, or the gateway shutting down.
    Killed(&'static str),
}

/// A command in progress or finished: what `exec` and `process` look at.
pub struct Job {
    pub id: String,
    pub session_key: String,
    pub command: String,
    pub workdir: String,
    pub pid: u32,
    pub started: Instant,
    pub output: Mutex<Capture>,
    pub stdin: tokio::sync::Mutex<Option<pipe::Sender>>,
    /// Fired to kill the command's group (with the reason).
    kill: CancellationToken,
    kill_reason: Mutex<&'static str>,
    end: watch::Receiver<Option<(End, Duration)>>,
}

/// What runs: a shell line, or a program and its arguments without a shell.
#[derive(Debug, Clone, Copy)]
pub enum Line<'a> {
    Shell(&'a str),
    Argv(&'a [String]),
}

/// What starting a command needs.
pub struct Spec<'a> {
    /// The command as the model wrote it (shown by `process`).
    pub command: &'a str,
    pub line: Line<'a>,
    pub workdir: &'a Path,
    pub env: &'a [(String, String)],
    pub timeout: Duration,
    /// Keep a pipe to the command's stdin (`process write`); else stdin is empty.
    pub stdin: bool,
    pub session_key: &'a str,
    /// Run it under bubblewrap (`sandbox.rs`).
    pub sandbox: Option<&'a super::sandbox::Sandbox>,
}

impl Job {
    /// Start the command; its driver task is owned by `tasks` and stops on `shutdown`.
    pub fn start(
        spec: &Spec<'_>,
        tasks: &tokio_util::task::TaskTracker,
        shutdown: &CancellationToken,
    ) -> std::io::Result<Arc<Job>> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let argv: Vec<&OsStr> = match spec.line {
            Line::Shell(line) => vec!["/bin/sh".as_ref(), "-c".as_ref(), line.as_ref()],
            Line::Argv(argv) => argv.iter().map(OsStr::new).collect(),
        };
        if argv.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "an empty command",
            ));
        }
        // Under bubblewrap, the command is bwrap's: `bwrap <its args> <argv>`.
        let argv: Vec<&OsStr> = match spec.sandbox {
            Some(s) => std::iter::once(s.program.as_os_str())
                .chain(s.args.iter().map(OsString::as_os_str))
                .chain(argv)
                .collect(),
            None => argv,
        };
        // Its stdin: a pipe the `process` tool writes to, or empty.
        let (stdin_child, stdin): (OwnedFd, Option<pipe::Sender>) = if spec.stdin {
            let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
            (r, Some(pipe::Sender::from_owned_fd(w)?))
        } else {
            (crate::children::no_input()?, None)
        };
        // Everything that can fail comes before the spawn: a started child is always driven.
        let pipe = pipe::Receiver::from_owned_fd(read)?;
        let child = crate::children::spawn(&crate::children::Launch {
            program: argv[0],
            args: &argv[1..],
            env: spec.env,
            dir: spec.workdir,
            // stdout and stderr into one pipe, so they interleave as written.
            stdio: [stdin_child.as_fd(), write.as_fd(), write.as_fd()],
        })?;
        // The parent's copies go now: EOF on the output pipe comes when the command's
        // group is gone.
        drop((write, stdin_child));
        let pid = child.id();
        let (end_tx, end_rx) = watch::channel(None);
        let job = Arc::new(Job {
            id: short_id(),
            session_key: spec.session_key.to_string(),
            command: spec.command.to_string(),
            workdir: spec.workdir.display().to_string(),
            pid,
            started: Instant::now(),
            output: Mutex::default(),
            stdin: tokio::sync::Mutex::new(stdin),
            kill: CancellationToken::new(),
            kill_reason: Mutex::new("killed"),
            end: end_rx,
        });
        let driver = drive(
            job.clone(),
            child,
            pipe,
            spec.timeout,
            shutdown.clone(),
            end_tx,
        );
        tasks.spawn(driver);
        Ok(job)
    }

    /// Kill the command's whole group (`why` is told to whoever reads its end).
    pub fn kill(&self, why: &'static str) {
        *self.kill_reason.lock() = why;
        self.kill.cancel();
    }

    /// How it ended, if it did.
    pub fn ended(&self) -> Option<(End, Duration)> {
        self.end.borrow().clone()
    }

    /// Wait until it ends.
    pub async fn wait(&self) -> (End, Duration) {
        let mut rx = self.end.clone();
        loop {
            if let Some(end) = rx.borrow_and_update().clone() {
                return end;
            }
            if rx.changed().await.is_err() {
                return (End::Killed("lost"), self.started.elapsed());
            }
        }
    }

    /// The result told to the model for a finished command (serialized, bounded).
    pub fn result(&self, end: &End, took: Duration) -> String {
        let (v, output) = self.result_parts(end, took);
        super::output::fit_json(v, "output", output)
    }

    /// The result without its output, and the output.
    pub fn result_parts(&self, end: &End, took: Duration) -> (Value, String) {
        let output = self.output.lock().render();
        let ms = took.as_millis() as u64;
        let v = match end {
            End::Exited(code) => json!({"status": "exited", "exitCode": code, "durationMs": ms}),
            End::Signalled(sig) => json!({"status": "signalled", "signal": sig, "durationMs": ms}),
            End::TimedOut(limit) => json!({"status": "timeout", "durationMs": ms,
                "note": format!("killed after {}s (timeoutSeconds)", limit.as_secs())}),
            End::Killed(why) => json!({"status": "killed", "reason": why, "durationMs": ms}),
        };
        (v, output)
    }
}

/// Kill process group `pid` (the command and everything it started).
fn kill_group(pid: u32) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        // ESRCH (already gone) is the usual answer once the command ended.
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

async fn drive(
    job: Arc<Job>,
    mut child: Child,
    mut pipe: pipe::Receiver,
    timeout: Duration,
    shutdown: CancellationToken,
    end_tx: watch::Sender<Option<(End, Duration)>>,
) {
    let mut buf = vec![0u8; CHUNK];
    let mut pipe_open = true;
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let end = loop {
        tokio::select! {
            n = pipe.read(&mut buf), if pipe_open => match n {
                Ok(0) | Err(_) => pipe_open = false,
                Ok(n) => job.output.lock().push(&buf[..n]),
            },
            status = child.wait() => {
                break match status {
                    Ok(Exit::Code(code)) => End::Exited(Some(code)),
                    Ok(Exit::Signal(sig)) => End::Signalled(sig),
                    Err(_) => End::Exited(None),
                };
            }
            _ = &mut deadline => break End::TimedOut(timeout),
            _ = job.kill.cancelled() => {
                break End::Killed(*job.kill_reason.lock());
            }
            _ = shutdown.cancelled() => break End::Killed("the gateway is shutting down"),
        }
    };
    // Whatever it started goes with it.
    kill_group(job.pid);
    let _ = child.wait().await;
    let _ = tokio::time::timeout(DRAIN, async {
        while pipe_open {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => pipe_open = false,
                Ok(n) => job.output.lock().push(&buf[..n]),
            }
        }
    })
    .await;
    let _ = end_tx.send(Some((end, job.started.elapsed())));
}

/// A short id for a background command (`process {sessionId}`).
fn short_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}
