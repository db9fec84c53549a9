//! The outbox's rows (both engines).

use switchboard_channels::{Action, Origin, OutboundFile};

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;
use super::Result;

/// Channel id of HTTP-API callers: their replies live in the transcript, so a run's end
/// never queues one here (nothing to send).
pub const API_CHANNEL: &str = "api";

#[derive(Debug, Clone, PartialEq)]
pub struct OutboxRow {
    pub id: i64,
    pub key: String,
    pub origin: Origin,
    pub text: String,
    /// A footer sent whole and last after the text (the announce's `Stats:` line).
    pub footer: Option<String>,
    /// Buttons under the message (see `switchboard_channels::Action`).
    pub actions: Vec<Action>,
    /// A file sent with the message (the gateway's copy; `media::outgoing`).
    pub file: Option<OutboundFile>,
    pub attempts: i64,
    /// Leading parts of the (split) message delivered by earlier attempts.
    pub parts_sent: i64,
}

/// An `outbox` row due for delivery, from either engine.
pub(super) fn decode_outbox(r: &impl Columns) -> Result<OutboxRow> {
    Ok(OutboxRow {
        id: r.int("id")?,
        key: r.string("key")?,
        origin: from_json(r.text("origin")?)?,
        text: r.string("text")?,
        footer: r.opt_string("footer")?,
        actions: match r.opt_text("actions")? {
            Some(a) => from_json(a)?,
            None => Vec::new(),
        },
        file: match r.opt_text("file")? {
            Some(f) => Some(from_json(f)?),
            None => None,
        },
        attempts: r.int("attempts")?,
        parts_sent: r.int("parts_sent")?,
    })
}

engine_fns! {
    /// Queue a message for delivery. A second call with the same key is a no-op.
    pub async fn enqueue_outbox(&self, key: &str, origin: &Origin, text: &str) -> Result<bool>;
    /// [`Self::enqueue_outbox`] with buttons under the message.
    pub async fn enqueue_outbox_with_actions(&self, key: &str, origin: &Origin, text: &str, actions: &[Action]) -> Result<bool>;
    /// [`Self::enqueue_outbox`] with a file (its copy's path, name, type and size).
    pub async fn enqueue_outbox_with_file(&self, key: &str, origin: &Origin, text: &str, file: &OutboundFile) -> Result<bool>;
    /// Pending messages whose next attempt is due, oldest first, without any row that an
    /// earlier row of its chat holds back (one being sent, or pending and not yet due). A
    /// chat's due rows come in order; the caller sends them in that order.
    pub async fn due_outbox(&self, limit: i64) -> Result<Vec<OutboxRow>>;
    /// When the earliest pending message that heads its chat is due (unix ms), if any. (A
    /// row behind an earlier one of its chat waits for that one, not for its own time.)
    pub async fn next_outbox_due(&self) -> Result<Option<i64>>;
    /// Record that the first `parts` parts of a message being sent were delivered, so a
    /// later attempt (after a failure or a crash) resumes after them.
    pub async fn mark_outbox_progress(&self, id: i64, parts: i64) -> Result<()>;
    /// Claim a pending row for sending (state `sending`). Returns false if another worker
    /// claimed it or it is no longer pending, so a stale read never sends a row twice.
    pub async fn claim_outbox(&self, id: i64) -> Result<bool>;
    /// At start: rows that were being sent when the process died go back to pending. (The
    /// channel may or may not have received them; this is the one at-least-once window.)
    /// In shared mode, at start and periodically: only the rows whose sender's lease has
    /// expired.
    pub async fn reset_sending_outbox(&self) -> Result<u64>;
    pub async fn mark_outbox_sent(&self, id: i64) -> Result<()>;
    /// Record a failed attempt; `retry_at` None means give up (state `failed`).
    pub async fn mark_outbox_failed(&self, id: i64, error: &str, retry_at: Option<i64>) -> Result<()>;
    /// Count of outbox rows by state (for metrics).
    pub async fn outbox_counts(&self) -> Result<Vec<(String, i64)>>;
    /// Look up an outbox row's state and attempts by key (tests and diagnostics).
    pub async fn outbox_state(&self, key: &str) -> Result<Option<(String, i64)>>;
    /// Make pending messages for one chat due now (its recipient just came back, e.g. a
    /// browser reconnected). Returns how many rows were moved forward.
    pub async fn retry_chat_now(&self, channel: &str, chat_id: &str) -> Result<u64>;
    /// An outbox row's chat, text and footer as stored: (channel, chat_id, thread_id, text,
    /// footer) (tests).
    #[cfg(test)]
    pub(crate) async fn outbox_chat_for_tests(&self, key: &str) -> Result<(String, String, Option<String>, String, Option<String>)>;
}
