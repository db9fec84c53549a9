//! The inbox's statements, the same on both engines. Accepting a message (with its run)
//! and claiming waiting messages stay beside their twins: on SQLite scripts of the
//! group-commit writer, on PostgreSQL the functions `switchboard_accept` and
//! `switchboard_claim` (see docs/internals.md, the store).

use super::{sql, Sql};

/// A waiting message, its id returned: session_key, origin, origin_channel,
/// origin_chat_id, origin_thread_id, sender_id, text, now.
pub(crate) const INSERT: Sql = sql!(
    "INSERT INTO inbox (session_key, origin, origin_channel, origin_chat_id,
         origin_thread_id, sender_id, text, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id"
);

/// How many messages wait: session_key.
pub(crate) const COUNT: Sql = sql!("SELECT COUNT(*) AS n FROM inbox WHERE session_key = $1");

/// Drop a key's waiting messages: session_key.
pub(crate) const CLEAR: Sql = sql!("DELETE FROM inbox WHERE session_key = $1");

/// The keys with waiting messages, each with the agent of its newest session and whether
/// one is active.
pub(crate) const WAITING: Sql = sql!(
    "SELECT k.key AS key,
         (SELECT s.agent_id FROM sessions s WHERE s.key = k.key
             ORDER BY s.status = 'active' DESC, s.created_at DESC, s." [rowid] " DESC LIMIT 1)
             AS agent_id,
         EXISTS (SELECT 1 FROM sessions s WHERE s.key = k.key AND s.status = 'active')
             AS active
     FROM (SELECT DISTINCT session_key AS key FROM inbox) AS k"
);
