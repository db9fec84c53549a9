//! The inbox: a waiting message, which of them a run takes, an inbound message to
//! accept (both engines).

use super::runs::{NewRun, RunRow};
use switchboard_channels::Origin;

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;
use super::starts::Started;
use super::Result;

#[derive(Debug, Clone, PartialEq)]
pub struct InboxItem {
    pub id: i64,
    pub origin: Origin,
    pub sender_id: String,
    pub text: String,
}

/// A message a claim moved into the transcript, from the claim's `RETURNING inbox_id,
/// origin, sender_id, content` (either engine).
pub(super) fn decode_claimed(r: &impl Columns) -> Result<InboxItem> {
    Ok(InboxItem {
        id: r.int("inbox_id")?,
        origin: from_json(r.text("origin")?)?,
        sender_id: r.string("sender_id")?,
        text: r.string("content")?,
    })
}

/// Which waiting messages a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    All,
    Oldest,
}

/// A session key with messages waiting in the inbox (see [`Store::sessions_with_inbox`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingSession {
    pub key: String,
    /// The agent of the key's newest session, if it ever had one.
    pub agent_id: Option<String>,
    /// Whether the key has an active session (none: it was archived, or never created).
    pub active: bool,
}

/// A session with waiting messages, from either engine (`active` is an `EXISTS`).
pub(super) fn decode_waiting(r: &impl Columns) -> Result<WaitingSession> {
    Ok(WaitingSession {
        key: r.string("key")?,
        agent_id: r.opt_string("agent_id")?,
        active: r.boolean("active")?,
    })
}

/// A message to accept (see [`Store::accept_message`]).
#[derive(Clone, Copy)]
pub struct NewInbound<'a> {
    pub session_key: &'a str,
    pub origin: &'a Origin,
    pub sender_id: &'a str,
    pub text: &'a str,
    /// The platform's message id, for dedupe.
    pub message_id: Option<&'a str>,
}

engine_fns! {
    /// Move waiting messages of `session_key` into the transcript of `session_id` as user
    /// messages (all of them, or only the oldest), oldest first. Returns what moved.
    /// Each message is claimed once, however many claims run at once.
    pub async fn claim_inbox(&self, session_key: &str, session_id: &str, run_id: &str, claim: Claim) -> Result<Vec<InboxItem>>;
    /// Queue an inbound message for `session_key`.
    pub async fn push_inbox(&self, session_key: &str, origin: &Origin, sender_id: &str, text: &str) -> Result<i64>;
    /// How many messages wait for `session_key`.
    pub async fn inbox_len(&self, session_key: &str) -> Result<i64>;
    /// Drop every waiting message of `session_key` (used by `/stop` and `/new`).
    pub async fn clear_inbox(&self, session_key: &str) -> Result<u64>;
    /// Session keys that have waiting messages.
    pub async fn sessions_with_inbox(&self) -> Result<Vec<WaitingSession>>;
    /// Accept an inbound message, in one transaction: record
    /// its platform id as taken (with a `message_id`), queue it in the inbox and, with
    /// `run`, insert the queued run that will take it.
    ///
    /// Returns the inbox id and the run's row; `None` (and nothing stored) when that
    /// platform id was taken before.
    pub async fn accept_message(&self, m: &NewInbound<'_>, run: Option<&NewRun<'_>>) -> Result<Option<(i64, Option<RunRow>)>>;
    /// [`Store::accept_message`] with a run that starts at once, in the same transaction
    /// (see [`Store::start_run`]; `model` is the model it starts with unless `run` names
    /// one): for a session that nothing runs for, whose lane has a free slot.
    ///
    /// Returns the inbox id, the run's row (running) and what its start found; `None` (and
    /// nothing stored) when that platform id was taken before.
    pub async fn accept_and_start(&self, m: &NewInbound<'_>, run: &NewRun<'_>, model: Option<&str>) -> Result<Option<(i64, RunRow, Started)>>;
}
