//! Progress lines' statements (a sub-agent's edited status message), the same on both
//! engines.

use super::{sql, Sql};

/// A child's line: child_session_key.
pub(crate) const GET: Sql = sql!("SELECT * FROM progress_lines WHERE child_session_key = $1");

/// Record a child's line while its session is active: child_session_key, channel,
/// chat_id, thread_id, message_id, text, now.
pub(crate) const PUT: Sql = sql!(
    "INSERT INTO progress_lines (child_session_key, channel, chat_id, thread_id,
         message_id, text, updated_at)
     SELECT $1, $2, $3, $4, $5, $6, $7
     WHERE EXISTS (SELECT 1 FROM sessions WHERE key = $1 AND status = 'active')
     ON CONFLICT (child_session_key) DO UPDATE SET channel = excluded.channel,
         chat_id = excluded.chat_id, thread_id = excluded.thread_id,
         message_id = excluded.message_id, text = excluded.text,
         updated_at = excluded.updated_at"
);

/// Drop a child's line: child_session_key.
pub(crate) const DROP: Sql = sql!("DELETE FROM progress_lines WHERE child_session_key = $1");

/// The lines of children whose run ended.
pub(crate) const OF_ENDED: Sql = sql!(
    "SELECT p.child_session_key FROM progress_lines p
     WHERE EXISTS (SELECT 1 FROM subagent_runs s
         WHERE s.child_session_key = p.child_session_key AND s.outcome IS NOT NULL)
     ORDER BY p.child_session_key"
);
