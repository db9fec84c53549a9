//! Sessions: a session's row and its state (both engines).

use switchboard_channels::Origin;

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;
use super::text::text_enum;
use super::Result;

text_enum! {
    /// A session row's state: one `active` row per key; `/new` and archiving retire it.
    pub enum SessionStatus {
        Active = "active",
        Archived = "archived",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub key: String,
    pub agent_id: String,
    pub origin: Option<Origin>,
    pub status: SessionStatus,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived_at: Option<i64>,
}

/// A `sessions` row, from either engine. `origin` is JSON text: PostgreSQL stores it as
/// `JSONB`, and its queries select `origin::text AS origin`.
pub(super) fn decode_session(r: &impl Columns) -> Result<SessionRow> {
    Ok(SessionRow {
        id: r.string("id")?,
        key: r.string("key")?,
        agent_id: r.string("agent_id")?,
        origin: r.opt_text("origin")?.map(from_json).transpose()?,
        status: SessionStatus::parse(r.text("status")?)?,
        created_at: r.int("created_at")?,
        updated_at: r.int("updated_at")?,
        archived_at: r.opt_int("archived_at")?,
    })
}

engine_fns! {
    /// The active session for `key`, created if there is none. `origin`, when given and
    /// different from the stored one, becomes the session's last-known origin.
    /// (SQLite caches active sessions: a hit with the same origin costs no round trip.)
    pub async fn ensure_session(&self, key: &str, agent_id: &str, origin: Option<&Origin>) -> Result<SessionRow>;
    /// The active session for `key`, if any.
    pub async fn active_session(&self, key: &str) -> Result<Option<SessionRow>>;
    /// A session by its id (active or archived).
    pub async fn session_by_id(&self, id: &str) -> Result<Option<SessionRow>>;
    /// The newest session row for `key`, active or archived.
    pub async fn latest_session(&self, key: &str) -> Result<Option<SessionRow>>;
    /// Archive the active session of `key` (its transcript stays readable). Returns
    /// the archived row, if there was one.
    pub async fn archive_session(&self, key: &str) -> Result<Option<SessionRow>>;
    /// Sessions, newest activity first. Activity is the later of the row's own update and
    /// its newest transcript message (a message does not touch the session row).
    pub async fn list_sessions(&self, include_archived: bool, limit: i64) -> Result<Vec<SessionRow>>;
}
