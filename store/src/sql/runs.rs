//! Runs' statements, the same on both engines. A run's start and finish stay beside their
//! twins: on SQLite scripts of the group-commit writer, on PostgreSQL the functions
//! `switchboard_start_run` and `switchboard_finish_run` (see docs/internals.md, the store).

use super::{sql, Sql};

/// A queued run: id, session_key, session_id, agent_id, lane, claim, origin,
/// origin_channel, origin_chat_id, origin_thread_id, model, timeout_ms, now.
pub(crate) const INSERT: Sql = sql!(
    "INSERT INTO runs (id, session_key, session_id, agent_id, lane, claim, status, origin,
         origin_channel, origin_chat_id, origin_thread_id, model, timeout_ms, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, $12, $13)"
);

/// One run: id.
pub(crate) const BY_ID: Sql = sql!("SELECT * FROM runs WHERE id = $1");

/// Progress on a running run: steps, input_tokens, output_tokens, id.
pub(crate) const PROGRESS: Sql = sql!(
    "UPDATE runs SET steps = $1, input_tokens = $2, output_tokens = $3
     WHERE id = $4 AND status = 'running'"
);

/// Runs not ended, oldest first.
pub(crate) const UNFINISHED: Sql =
    sql!("SELECT * FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, "[rowid]);

/// Each running run: its session key and id.
pub(crate) const RUNNING: Sql = sql!("SELECT session_key, id FROM runs WHERE status = 'running'");

/// A session's most recent runs, newest first: session_key, limit.
pub(crate) const OF_SESSION: Sql = sql!(
    "SELECT * FROM runs WHERE session_key = $1
     ORDER BY created_at DESC, " [rowid] " DESC LIMIT $2"
);
