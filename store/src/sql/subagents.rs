//! The sub-agent registry's statements and the archive timers', the same on both engines.
//! A spawn stays beside its twin: on SQLite one script of the group-commit writer, on
//! PostgreSQL a transaction of single statements. Orphaned announces are found in SQL on
//! PostgreSQL only (its leases are rows; SQLite's live in its one process).

use super::{sql, Sql};

/// `sql!` of a registry row with what its child's run adds, and a tail.
macro_rules! subagent_row {
    ($($tail:tt)+) => {
        $crate::sql::sql!("SELECT s.*, r.status AS status, r.started_at AS started_at,
                 r.input_tokens AS input_tokens, r.output_tokens AS output_tokens,
                 r.cost_usd AS cost_usd, r.session_id AS session_id
             FROM subagent_runs s JOIN runs r ON r.id = s.run_id" $($tail)+)
    };
}
pub(crate) use subagent_row;

/// A child by its run: run_id.
pub(crate) const BY_RUN: Sql = subagent_row!(" WHERE s.run_id = $1");

/// A child by its session: child_session_key.
pub(crate) const BY_CHILD: Sql = subagent_row!(" WHERE s.child_session_key = $1");

/// The child a `task` tool call created: requester_run_id, task_call_id.
pub(crate) const OF_TASK_CALL: Sql =
    subagent_row!(" WHERE s.requester_run_id = $1 AND s.task_call_id = $2");

/// A requester's children, newest first: requester_session_key, limit.
pub(crate) const OF_REQUESTER: Sql = subagent_row!(
    " WHERE s.requester_session_key = $1
     ORDER BY s.created_at DESC, s." [rowid] " DESC LIMIT $2"
);

/// All children, newest first: limit.
pub(crate) const ALL: Sql =
    subagent_row!(" ORDER BY s.created_at DESC, s." [rowid] " DESC LIMIT $1");

/// Children whose announce is pending, the earliest ended first.
pub(crate) const PENDING_ANNOUNCES: Sql =
    subagent_row!(" WHERE s.announce_state = 'pending' ORDER BY s.ended_at, s."[rowid]);

/// Who stopped a child: note, run_id.
pub(crate) const STOP_NOTE: Sql =
    sql!("UPDATE subagent_runs SET stop_note = $1 WHERE run_id = $2 AND outcome IS NULL");

/// The earliest timer.
pub(crate) const NEXT_TIMER: Sql =
    sql!("SELECT id, kind, target, due_at FROM timers ORDER BY due_at, id LIMIT 1");

/// Drop a timer: id.
pub(crate) const DROP_TIMER: Sql = sql!("DELETE FROM timers WHERE id = $1");

/// Archive a key's active session, its id returned: now, key.
pub(crate) const ARCHIVE_SESSION: Sql = sql!(
    "UPDATE sessions SET status = 'archived', archived_at = $1, updated_at = $1
     WHERE key = $2 AND status = 'active' RETURNING id"
);

/// Stamp a child archived: now, child_session_key.
pub(crate) const STAMP_ARCHIVED: Sql = sql!(
    "UPDATE subagent_runs SET archived_at = $1
     WHERE child_session_key = $2 AND archived_at IS NULL"
);
