//! Interrupts' statements (`/stop`, a run taken off its lane), the same on both engines.
//! Cancelling several runs at once stays beside its twin: PostgreSQL binds their ids as
//! one array (`= ANY($n)`), SQLite has no array parameters and updates them one by one.

use super::{sql, Sql};

/// End a run that had not started: now, id.
pub(crate) const CANCEL_UNSTARTED: Sql = sql!(
    "UPDATE runs SET status = 'cancelled', error = 'stopped before it started',
         ended_at = $1
     WHERE id = $2 AND status IN ('queued', 'running')"
);

/// Drop a key's waiting messages, their ids returned: session_key.
pub(crate) const DROP_WAITING: Sql = sql!("DELETE FROM inbox WHERE session_key = $1 RETURNING id");

/// The inbox ids of the messages a run claimed: session_id, run_id.
pub(crate) const CLAIMED_BY: Sql = sql!(
    "SELECT inbox_id FROM messages
     WHERE session_id = $1 AND run_id = $2 AND inbox_id IS NOT NULL ORDER BY seq"
);
