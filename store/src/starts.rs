//! Starting a run (both engines): what a start found, and a message whose run starts at
//! once in the session it opens.

use super::engine::engine_fns;
use super::inbox::Claim;
use super::inbox::{InboxItem, NewInbound};
use super::messages::MessageRow;
use super::runs::{NewRun, RunRow};
use super::sessions::SessionRow;
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

/// A message whose run starts at once, in the active session of the message's key (see
/// [`Store::open_and_start`]): the run is on `lane`, of `agent_id`, with the message's
/// origin, and no model or timeout of its own.
pub struct NewTurn<'a> {
    pub agent_id: &'a str,
    pub inbound: NewInbound<'a>,
    pub run_id: &'a str,
    pub lane: &'a str,
    /// Whether the run takes every waiting message of its session, or only the oldest.
    pub claim_all: bool,
    /// The model the run starts with.
    pub model: Option<&'a str>,
}

impl<'a> NewTurn<'a> {
    /// The queued run this turn inserts, in the session `session_id`.
    pub fn run(&self, session_id: &'a str) -> NewRun<'a> {
        NewRun {
            id: self.run_id,
            session_key: self.inbound.session_key,
            session_id,
            agent_id: self.agent_id,
            lane: self.lane,
            claim_all: self.claim_all,
            origin: Some(self.inbound.origin),
            model: None,
            timeout_ms: None,
        }
    }
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
    /// [`Store::ensure_session`] of the message's key with its origin, then
    /// [`Store::accept_and_start`] of the message and the turn's run in that session (the
    /// session is ensured even when the platform id was taken before, as it would be on its
    /// own). On PostgreSQL one round trip and one transaction; on SQLite the two calls.
    ///
    /// Returns the session and, unless that platform id was taken before (then nothing
    /// more is stored), the inbox id, the run's row (running) and what its start found.
    pub async fn open_and_start(&self, turn: &NewTurn<'_>) -> Result<(SessionRow, Option<(i64, RunRow, Started)>)>;
}
