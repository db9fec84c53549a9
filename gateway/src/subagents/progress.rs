//! Progress lines (docs/subagents.md, "Progress lines"): the one message per child that
//! the requester's chat shows and the child's `progress` calls rewrite in place.
//!
//! The hub keeps one worker per child with a line to show: the `progress` tool hands it
//! the newest text (a `watch`, so it never waits); the worker posts the first line at once
//! and then edits at most once per [`MIN_EDIT_INTERVAL`], showing only the newest text of
//! each window. The platform's handle of the message is stored once the post succeeded
//! (`store::ProgressLine`), so a restarted gateway edits that same message. A worker is
//! owned by the runtime's tracker, stops on the shutdown token, and leaves after
//! [`IDLE_EXIT`] without a new line.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use switchboard_channels::backoff::Backoff;
use switchboard_channels::{ChannelError, LineError, Origin};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::runtime::Runtime;
use crate::store::{now_ms, ProgressLine, StoreError};

/// At most one edit of a child's line per this long.
pub const MIN_EDIT_INTERVAL: Duration = Duration::from_secs(2);
/// A worker with no new line for this long leaves (the next line starts another).
const IDLE_EXIT: Duration = Duration::from_secs(300);
/// Longest platform rate-limit wait honoured before the line is tried again.
const MAX_RATE_WAIT: Duration = Duration::from_secs(60);
/// Tries of one line after passing failures (network, 5xx, channel not running).
const TRIES: u32 = 3;
/// Waits between those tries: 1 s, then 2 s.
const RETRY: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(2));

/// Where a child's line goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The child's session key: one line per child.
    pub child: String,
    /// The requester's chat.
    pub origin: Origin,
}

impl Target {
    /// The line's stable key (the web chat's message key).
    pub fn key(&self) -> String {
        format!("progress:{}", self.child)
    }
}

/// What a worker needs from the world: the chat and the store. A seam, so the rate limit
/// is tested on tokio's paused clock.
#[async_trait]
pub trait Lines: Send + Sync + 'static {
    /// The stored handle of the child's line, if one was posted.
    async fn load(&self, child: &str) -> Result<Option<ProgressLine>, StoreError>;
    async fn save(&self, line: &ProgressLine) -> Result<(), StoreError>;
    /// Post the line; the platform's id of the message.
    async fn post(&self, target: &Target, text: &str) -> Result<String, LineError>;
    async fn edit(&self, target: &Target, message_id: &str, text: &str) -> Result<(), LineError>;
}

/// The runtime's [`Lines`]: its channels and its store.
pub struct RuntimeLines(pub Arc<Runtime>);

impl RuntimeLines {
    fn channel(
        &self,
        origin: &Origin,
    ) -> Result<Arc<dyn switchboard_channels::Channel>, LineError> {
        self.0.channel(&origin.channel).ok_or_else(|| {
            LineError::Channel(ChannelError::Temporary(format!(
                "channel `{}` is not running",
                origin.channel
            )))
        })
    }
}

#[async_trait]
impl Lines for RuntimeLines {
    async fn load(&self, child: &str) -> Result<Option<ProgressLine>, StoreError> {
        self.0.store.progress_line(child).await
    }

    async fn save(&self, line: &ProgressLine) -> Result<(), StoreError> {
        self.0.store.save_progress_line(line).await
    }

    async fn post(&self, target: &Target, text: &str) -> Result<String, LineError> {
        let ch = self.channel(&target.origin)?;
        ch.post_line(&target.origin, &target.key(), text).await
    }

    async fn edit(&self, target: &Target, message_id: &str, text: &str) -> Result<(), LineError> {
        let ch = self.channel(&target.origin)?;
        ch.edit_line(&target.origin, message_id, text).await
    }
}

type Workers = Arc<Mutex<HashMap<String, watch::Sender<String>>>>;

/// The workers of the children that have a line, by child session key.
#[derive(Default)]
pub struct ProgressHub {
    workers: Workers,
}

impl ProgressHub {
    /// Show `text` as `target`'s line: handed to its worker (started if it has none) and
    /// returns at once. The worker is spawned into `tasks` and stops on `cancel`.
    pub fn submit(
        &self,
        lines: Arc<dyn Lines>,
        tasks: &TaskTracker,
        cancel: CancellationToken,
        target: Target,
        text: String,
    ) {
        let mut workers = self.workers.lock();
        if let Some(tx) = workers.get(&target.child) {
            if tx.send(text.clone()).is_ok() {
                return;
            }
        }
        let (tx, rx) = watch::channel(text);
        workers.insert(target.child.clone(), tx);
        let worker = Worker {
            lines,
            target,
            rx,
            workers: self.workers.clone(),
            cancel,
            shown: None,
        };
        tasks.spawn(worker.run());
    }

    /// Children with a worker right now.
    pub fn active(&self) -> usize {
        self.workers.lock().len()
    }

    fn has(&self, child: &str) -> bool {
        self.workers.lock().contains_key(child)
    }
}

/// Show the child's line in `target` with `text` through the runtime's hub.
pub fn show(rt: &Arc<Runtime>, target: Target, text: String) {
    rt.parts.get::<ProgressHub>().submit(
        Arc::new(RuntimeLines(rt.clone())),
        &rt.tasks.tracker,
        rt.tasks.shutdown.child_token(),
        target,
        text,
    );
}

/// A child ended: a line it showed says how (`✅ label: done`), through the same rate
/// limit. Nothing for a child that never called `progress`.
pub async fn child_ended(rt: &Arc<Runtime>, child: &str) {
    let has_line = rt.parts.get::<ProgressHub>().has(child)
        || matches!(rt.store.progress_line(child).await, Ok(Some(_)));
    if !has_line {
        return;
    }
    let row = match rt.store.subagent_by_child(child).await {
        Ok(Some(row)) => row,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(child, error = %e, "cannot read the sub-agent to end its progress line");
            return;
        }
    };
    let Some(origin) = row.requester_origin.clone().filter(crate::outbox::is_chat) else {
        return;
    };
    let text = super::progress_text::ended(&label_of(&row), row.outcome);
    let target = Target {
        child: child.to_string(),
        origin,
    };
    show(rt, target, text);
}

/// At start: every stored line of a child that has ended is brought to how it ended. The
/// end edit of a child that ended just before a stop waited in memory (on the edit
/// interval, or a platform's rate limit) and was lost with the process; the worker skips a
/// line whose stored text is already the end, so this costs a platform call only where one
/// is owed.
pub async fn recover(rt: &Arc<Runtime>) {
    let children = match rt.store.ended_children_with_lines().await {
        Ok(children) => children,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the progress lines of ended children");
            return;
        }
    };
    for child in children {
        child_ended(rt, &child).await;
    }
}

/// The name a child's line goes by: its label, else the start of its task.
pub fn label_of(row: &crate::store::SubagentRow) -> String {
    row.label.clone().unwrap_or_else(|| {
        crate::text::head(&row.task, super::progress_text::MAX_LABEL * 4).to_string()
    })
}

/// The posted message: its id and the text it shows.
struct Shown {
    message_id: String,
    text: String,
}

struct Worker {
    lines: Arc<dyn Lines>,
    target: Target,
    rx: watch::Receiver<String>,
    workers: Workers,
    cancel: CancellationToken,
    shown: Option<Shown>,
}

impl Worker {
    async fn run(mut self) {
        let mut ready_at = self.restore().await;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(ready_at) => {}
                _ = self.cancel.cancelled() => return,
            }
            if !self.show_latest().await {
                return;
            }
            ready_at = Instant::now() + MIN_EDIT_INTERVAL;
            tokio::select! {
                changed = self.rx.changed() => if changed.is_err() { return },
                _ = tokio::time::sleep(IDLE_EXIT) => {
                    // Leave unless a line came in meanwhile (sent under the same lock).
                    let mut workers = self.workers.lock();
                    if !self.rx.has_changed().unwrap_or(false) {
                        workers.remove(&self.target.child);
                        return;
                    }
                }
                _ = self.cancel.cancelled() => return,
            }
        }
    }

    /// The stored handle of a line posted before (by this process or one before it), and
    /// when the first edit may be made: the interval counts from the stored last change.
    async fn restore(&mut self) -> Instant {
        let now = Instant::now();
        let stored = match self.lines.load(&self.target.child).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(child = %self.target.child, error = %e, "cannot read the progress line's handle; posting a new one");
                None
            }
        };
        let Some(line) = stored.filter(|l| {
            l.channel == self.target.origin.channel && l.chat_id == self.target.origin.chat_id
        }) else {
            return now;
        };
        self.shown = Some(Shown {
            message_id: line.message_id,
            text: line.text,
        });
        let since = Duration::from_millis((now_ms() - line.updated_at).max(0) as u64);
        now + MIN_EDIT_INTERVAL.saturating_sub(since)
    }

    /// Show the newest text: post it, or edit the posted message. Returns false when the
    /// worker should stop (shutdown).
    async fn show_latest(&mut self) -> bool {
        let mut failures = 0;
        loop {
            let text = self.rx.borrow_and_update().clone();
            if self.shown.as_ref().is_some_and(|s| s.text == text) {
                return true;
            }
            let wait = match self.apply(&text).await {
                Ok(()) => return true,
                Err(LineError::Channel(ChannelError::RateLimited(d))) => d.min(MAX_RATE_WAIT),
                Err(LineError::Channel(e)) if e.is_retryable() && failures + 1 < TRIES => {
                    failures += 1;
                    tracing::warn!(child = %self.target.child, error = %e, "progress line failed; retrying");
                    RETRY.delay(failures)
                }
                Err(e) => {
                    tracing::warn!(child = %self.target.child, error = %e, "progress line not shown");
                    return true;
                }
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.cancel.cancelled() => return false,
            }
        }
    }

    /// One post or edit of `text`. An edit whose message is gone posts a new one (once).
    async fn apply(&mut self, text: &str) -> Result<(), LineError> {
        if let Some(shown) = &self.shown {
            match self.lines.edit(&self.target, &shown.message_id, text).await {
                Ok(()) => {
                    let id = shown.message_id.clone();
                    self.record(id, text).await;
                    return Ok(());
                }
                Err(LineError::Gone(why)) => {
                    tracing::info!(child = %self.target.child, reason = %why, "progress message gone; posting a new one");
                    self.shown = None;
                }
                Err(e) => return Err(e),
            }
        }
        let id = self.lines.post(&self.target, text).await?;
        self.record(id, text).await;
        Ok(())
    }

    /// The line now shows `text` in message `id`: remembered, and stored for a restart.
    async fn record(&mut self, message_id: String, text: &str) {
        let line = ProgressLine {
            child_session_key: self.target.child.clone(),
            channel: self.target.origin.channel.clone(),
            chat_id: self.target.origin.chat_id.clone(),
            thread_id: self.target.origin.thread_id.clone(),
            message_id: message_id.clone(),
            text: text.to_string(),
            updated_at: now_ms(),
        };
        if let Err(e) = self.lines.save(&line).await {
            tracing::warn!(child = %self.target.child, error = %e, "cannot store the progress line's handle; a restart would post a new one");
        }
        self.shown = Some(Shown {
            message_id,
            text: text.to_string(),
        });
    }
}

#[cfg(test)]
#[path = "progress_tests.rs"]
mod tests;
