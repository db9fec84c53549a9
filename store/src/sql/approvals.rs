//! Exec approvals' statements (`approval_requests`, `exec_allowlist`), the same on both
//! engines. The allow-always list written from an array (PostgreSQL's `UNNEST`; SQLite has
//! no array parameters) and a chat's newest session (JSON paths) stay beside each
//! engine's twin.

use super::{sql, Sql};

/// Record a tool call's request unless it has one, the row returned when inserted: id,
/// run_id, tool_call_id, session_key, agent_id, label, channel, chat_id, origin, workdir,
/// command, executables, now, expires_at.
pub(crate) const REQUEST: Sql = sql!(
    "INSERT INTO approval_requests (id, run_id, tool_call_id, session_key, agent_id,
         label, channel, chat_id, origin, workdir, command, executables, created_at,
         expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (run_id, tool_call_id) DO NOTHING
     RETURNING *"
);

/// A tool call's request: run_id, tool_call_id.
pub(crate) const OF_CALL: Sql =
    sql!("SELECT * FROM approval_requests WHERE run_id = $1 AND tool_call_id = $2");

/// One request: id.
pub(crate) const BY_ID: Sql = sql!("SELECT * FROM approval_requests WHERE id = $1");

/// The requests of a run's tool calls: run_id.
pub(crate) const OF_RUN: Sql = sql!("SELECT * FROM approval_requests WHERE run_id = $1");

/// Answer a pending, unexpired request from its chat, the row returned: status,
/// decided_by, now, id, channel, chat_id.
pub(crate) const ANSWER: Sql = sql!(
    "UPDATE approval_requests SET status = $1, decided_by = $2, resolved_at = $3
     WHERE id = $4 AND status = 'pending' AND channel = $5 AND chat_id = $6
         AND expires_at > $3
     RETURNING *"
);

/// End a pending request without an answer: status, now, id.
pub(crate) const CLOSE: Sql = sql!(
    "UPDATE approval_requests SET status = $1, resolved_at = $2
     WHERE id = $3 AND status = 'pending'"
);

/// Requests still waiting, oldest first.
pub(crate) const PENDING: Sql =
    sql!("SELECT * FROM approval_requests WHERE status = 'pending' ORDER BY created_at, id");

/// The executables an agent may run without asking: agent_id.
pub(crate) const ALLOWED: Sql = sql!("SELECT path FROM exec_allowlist WHERE agent_id = $1");

/// The whole allowlist.
pub(crate) const ALLOWLIST: Sql = sql!("SELECT * FROM exec_allowlist ORDER BY agent_id, path");

/// Remove an executable of one agent (or of all, agent_id NULL): path, agent_id.
pub(crate) const REVOKE: Sql = sql!(
    "DELETE FROM exec_allowlist WHERE path = $1 AND (" [cast 2 text] " IS NULL OR agent_id = $2)"
);
