//! A child's announce as the store takes it (both engines).

use super::engine::engine_fns;
use super::messages::NewMessage;
use super::Result;

/// The announce message for the requester's chat: its text and its footer (the `Stats:`
/// line), which the outbox keeps apart so every adapter sends it whole and last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnounceMessage<'a> {
    pub text: &'a str,
    pub footer: &'a str,
}

engine_fns! {
    /// Store the announce prompt `text` in the child's transcript (session `session_id`),
    /// unless it was stored for this announce before.
    pub async fn ask_for_announce(&self, run_id: &str, session_id: &str, text: &str) -> Result<()>;
    pub async fn bump_announce_attempts(&self, run_id: &str) -> Result<i64>;
    /// Finish the announce: queue `message` in the outbox (key `announce:<runId>`) or
    /// record a skip (`None`), and for `cleanup: delete` arm an immediate archive, in one transaction. Only a
    /// `pending` announce moves, so a second call does nothing. `step_answer` (the session
    /// and the child's answer to the announce prompt) is stored in the same transaction.
    pub async fn complete_announce(&self, run_id: &str, message: Option<AnnounceMessage<'_>>, archive_now: bool, step_answer: Option<(&str, &NewMessage)>) -> Result<bool>;
    /// [`Store::complete_announce`], and `fan_in` (the announce as the requester agent
    /// reads it) appended to the requester's active session in the same transaction.
    pub async fn complete_announce_fan_in(&self, run_id: &str, message: Option<AnnounceMessage<'_>>, archive_now: bool, step_answer: Option<(&str, &NewMessage)>, fan_in: Option<&str>) -> Result<bool>;
    /// Mark an announce failed for good (kept for `/subagents info`).
    pub async fn fail_announce(&self, run_id: &str) -> Result<()>;
}
