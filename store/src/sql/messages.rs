//! Transcript statements (`messages`), the same on both engines.

use super::{sql, Sql};

/// One message, its seq returned: session_id, run_id, role, content, tool_calls,
/// tool_call_id, tool_name, now.
pub(crate) const INSERT: Sql = sql!(
    "INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id,
         tool_name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq"
);

/// A session's transcript, oldest first: session_id.
pub(crate) const TRANSCRIPT: Sql =
    sql!("SELECT * FROM messages WHERE session_id = $1 ORDER BY seq");

/// The last messages of a session, oldest first: session_id, limit.
pub(crate) const TAIL: Sql = sql!(
    "SELECT * FROM (SELECT * FROM messages WHERE session_id = $1
         ORDER BY seq DESC LIMIT $2) AS m ORDER BY seq"
);
