//! Announce statements (`subagent_runs`' announce columns), the same on both engines. An
//! announce's completion and its prompt stay beside each engine's twin: on SQLite one
//! script of the group-commit writer, on PostgreSQL a transaction of single statements
//! (SQLite's `changes()` chains them there; PostgreSQL has no such function).

use super::{sql, Sql};

/// Count one more attempt, the new count returned: run_id.
pub(crate) const BUMP_ATTEMPTS: Sql = sql!(
    "UPDATE subagent_runs SET announce_attempts = announce_attempts + 1
     WHERE run_id = $1 RETURNING announce_attempts"
);

/// Mark a pending announce failed for good: run_id.
pub(crate) const FAIL: Sql = sql!(
    "UPDATE subagent_runs SET announce_state = 'failed'
     WHERE run_id = $1 AND announce_state = 'pending'"
);
