//! Compactions' statements, the same on both engines.

use super::{sql, Sql};

/// Record a compaction (a repeat is ignored): session_id, through_seq, summary, replaced,
/// tokens_before, tokens_after, now.
pub(crate) const ADD: Sql = sql!(
    "INSERT INTO compactions (session_id, through_seq, summary, replaced, tokens_before,
         tokens_after, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (session_id, through_seq) DO NOTHING"
);

/// The compaction that reaches furthest: session_id.
pub(crate) const LATEST: Sql =
    sql!("SELECT * FROM compactions WHERE session_id = $1 ORDER BY through_seq DESC LIMIT 1");

/// Every compaction of a session, oldest first: session_id.
pub(crate) const OF_SESSION: Sql =
    sql!("SELECT * FROM compactions WHERE session_id = $1 ORDER BY through_seq");
