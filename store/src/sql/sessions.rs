//! Sessions' statements, the same on both engines. Ensuring a key's active session stays
//! beside its twin: on SQLite a script of the group-commit writer (with `changes()`), on
//! PostgreSQL one statement of data-modifying CTEs (SQLite has none).

use super::{sql, Sql};

/// `sql!` of a head, the columns of `sessions` as `decode_session` reads them (`origin`
/// is `JSONB` on PostgreSQL), and a tail.
macro_rules! with_columns {
    ($head:literal; $($tail:tt)*) => {
        sql!($head "id, key, agent_id, " [json_text origin]
            ", status, created_at, updated_at, archived_at" $($tail)*)
    };
}

/// A key's active session: key.
pub(crate) const ACTIVE: Sql =
    with_columns!("SELECT "; " FROM sessions WHERE key = $1 AND status = 'active'");

/// A session by id: id.
pub(crate) const BY_ID: Sql = with_columns!("SELECT "; " FROM sessions WHERE id = $1");

/// A key's newest session, active or archived: key.
pub(crate) const LATEST: Sql = with_columns!("SELECT ";
    " FROM sessions WHERE key = $1 ORDER BY created_at DESC, " [rowid] " DESC LIMIT 1"
);

/// Archive a key's active session, the row returned: now, key.
pub(crate) const ARCHIVE: Sql = with_columns!(
    "UPDATE sessions SET status = 'archived', archived_at = $1, updated_at = $1
     WHERE key = $2 AND status = 'active' RETURNING ";
);

/// `sql!` listing sessions, newest activity first: the later of the row's own update and
/// its newest message (a message does not touch the session row). The tail filters.
macro_rules! list {
    ($($filter:tt)*) => {
        sql!("SELECT s.id, s.key, s.agent_id, s." [json_text origin] ", s.status,
                 s.created_at, s.archived_at, " [greatest] "(s.updated_at,
                 COALESCE((SELECT m.created_at FROM messages m WHERE m.session_id = s.id
                     ORDER BY m.seq DESC LIMIT 1), 0)) AS updated_at
             FROM sessions s" $($filter)* " ORDER BY updated_at DESC LIMIT $1")
    };
}

/// Every session: limit.
pub(crate) const LIST_ALL: Sql = list!();

/// The active sessions: limit.
pub(crate) const LIST_ACTIVE: Sql = list!(" WHERE s.status = 'active'");
