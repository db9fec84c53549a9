//! The daemon's stderr as a shared, growing list of lines that tests can wait on.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use anyhow::bail;
use tokio::sync::Notify;

/// A position in the log: "lines logged from here on".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogMark(usize);

impl LogMark {
    /// The beginning of the log.
    pub const START: LogMark = LogMark(0);
}

/// Lines plus a `Notify` that wakes waiters whenever a line is added.
#[derive(Default)]
pub(super) struct Log {
    lines: Mutex<Vec<String>>,
    added: Notify,
}

impl Log {
    fn guard(&self) -> MutexGuard<'_, Vec<String>> {
        // A poisoned lock only means a reader task panicked mid-push; the lines are still usable.
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn push(&self, line: String) {
        self.guard().push(line);
        self.added.notify_waiters();
    }

    pub(super) fn lines(&self) -> Vec<String> {
        self.guard().clone()
    }

    pub(super) fn lines_since(&self, mark: LogMark) -> Vec<String> {
        self.guard()
            .get(mark.0..)
            .map(<[String]>::to_vec)
            .unwrap_or_default()
    }

    pub(super) fn mark(&self) -> LogMark {
        LogMark(self.guard().len())
    }

    fn find_since(&self, mark: LogMark, contains: &str) -> Option<String> {
        let lines = self.guard();
        lines
            .get(mark.0..)?
            .iter()
            .find(|l| l.contains(contains))
            .cloned()
    }

    /// Waits (woken by each new line, not by polling) until a line after `mark` contains
    /// `contains`; returns that line, or an error listing the log on timeout.
    pub(super) async fn wait_for(
        &self,
        mark: LogMark,
        contains: &str,
        timeout: Duration,
    ) -> anyhow::Result<String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            // Register interest before checking, so a line pushed in between still wakes us.
            let added = self.added.notified();
            tokio::pin!(added);
            added.as_mut().enable();
            if let Some(line) = self.find_since(mark, contains) {
                return Ok(line);
            }
            if tokio::time::timeout_at(deadline, added).await.is_err() {
                bail!(
                    "timed out after {timeout:?} waiting for a log line containing {contains:?}; stderr so far:\n{}",
                    self.lines().join("\n")
                );
            }
        }
    }
}

/// Removes ANSI escape sequences (colours), in case the daemon ignores `NO_COLOR`.
pub(super) fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in '@'..='~'.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}
