//! Compactions: the older part of a session's transcript summarized by the model, one
//! row per compaction (both engines; migration `0018_compactions.sql` / postgres
//! `0009_compactions.sql`). A row is the summary and the marker of the messages it stands
//! for, so one insert commits both; the messages themselves stay.

use super::decode::Columns;
use super::engine::engine_fns;
use super::Result;

/// A compaction to commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompaction {
    /// The last message (`seq`) the summary stands for; every message of the session up
    /// to it is read as the summary from then on.
    pub through_seq: i64,
    pub summary: String,
    /// How many messages were summarized this time (the earlier summary not counted).
    pub replaced: i64,
    /// Estimated tokens of what it replaced, and of the summary.
    pub tokens_before: i64,
    pub tokens_after: i64,
}

/// A stored compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionRow {
    pub session_id: String,
    pub through_seq: i64,
    pub summary: String,
    pub replaced: i64,
    pub tokens_before: i64,
    pub tokens_after: i64,
    pub created_at: i64,
}

/// A `compactions` row, from either engine.
pub(super) fn decode_compaction(r: &impl Columns) -> Result<CompactionRow> {
    Ok(CompactionRow {
        session_id: r.string("session_id")?,
        through_seq: r.int("through_seq")?,
        summary: r.string("summary")?,
        replaced: r.int("replaced")?,
        tokens_before: r.int("tokens_before")?,
        tokens_after: r.int("tokens_after")?,
        created_at: r.int("created_at")?,
    })
}

engine_fns! {
    /// Commit a compaction of `session_id` in one statement. A second one through the
    /// same message (two compactions raced) is ignored: either stands for the same rows.
    pub async fn add_compaction(&self, session_id: &str, c: &NewCompaction) -> Result<()>;
    /// The compaction that reaches furthest (the one a run reads), if any. Each summary
    /// covers everything up to its `through_seq` (it summarized the one before it too),
    /// so the furthest is always whole, even after two compactions raced.
    pub async fn latest_compaction(&self, session_id: &str) -> Result<Option<CompactionRow>>;
    /// Every compaction of a session, oldest first (the transcript API).
    pub async fn compactions(&self, session_id: &str) -> Result<Vec<CompactionRow>>;
}
