//! What starting a run found (both engines).

use super::engine::engine_fns;
use super::inbox::Claim;
use super::inbox::InboxItem;
use super::messages::MessageRow;
use super::Result;

/// What starting a run found: the messages it claimed (oldest first), the session's
/// whole transcript, those included, and when the run first started (a resumed run keeps
/// the time of its first start: its runtime and its run timeout count from there).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Started {
    pub claimed: Vec<InboxItem>,
    pub transcript: Vec<MessageRow>,
    pub started_at: Option<i64>,
}

engine_fns! {
    /// Start a run, in one transaction: mark it running,
    /// move the session's waiting messages into its transcript (`claim`: all of them or
    /// only the oldest; `None` when resuming a run that claimed its messages before a
    /// restart) and read the transcript back. The session id is refreshed (a `/new` may
    /// have replaced it); the model is set unless the run has one.
    ///
    /// `None` when the run is no longer queued or running (it was stopped while it waited).
    pub async fn start_run(&self, id: &str, session_key: &str, session_id: &str, model: Option<&str>, claim: Option<Claim>) -> Result<Option<Started>>;
}
