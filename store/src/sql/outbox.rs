//! The outbox's statements, the same on both engines. Putting `sending` rows back at start
//! in shared mode (only those whose sender's lease expired) is PostgreSQL's own: leases
//! are rows there, and SQLite serves one process.

use super::{sql, Sql};

/// A message with buttons, unless its key exists: key, channel, chat_id, thread_id,
/// origin, text, actions, now.
pub(crate) const INSERT_WITH_ACTIONS: Sql = sql!(
    "INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, actions,
         next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (key) DO NOTHING"
);

/// A message with a file, unless its key exists: key, channel, chat_id, thread_id,
/// origin, text, file, now.
pub(crate) const INSERT_WITH_FILE: Sql = sql!(
    "INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, file,
         next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (key) DO NOTHING"
);

/// `sql!` of the pending rows no earlier row of their chat (channel, chat, thread) holds
/// back: the columns, a filter of the rows, and the tail that closes the `NOT EXISTS` (with
/// more that holds back, if any).
macro_rules! heads_its_chat {
    ($columns:literal; $filter:literal; $tail:literal) => {
        sql!($columns " FROM outbox o
             WHERE state = 'pending'" $filter "
               AND NOT EXISTS (SELECT 1 FROM outbox e
                   WHERE e.channel = o.channel AND e.chat_id IS NOT DISTINCT FROM o.chat_id
                     AND e.thread_id IS NOT DISTINCT FROM o.thread_id AND e.id < o.id
                     AND e.state IN ('pending', 'sending')" $tail)
    };
}

/// Due rows, oldest first, that no earlier row of their chat holds back (being sent, or
/// pending and not yet due): now, limit.
pub(crate) const DUE: Sql = heads_its_chat!(
    "SELECT id, key, origin, text, footer, actions, file, attempts, parts_sent";
    " AND next_attempt_at <= $1";
    " AND (e.state = 'sending' OR e.next_attempt_at > $1)) ORDER BY id LIMIT $2"
);

/// When the earliest row that heads its chat is due, as `t`.
pub(crate) const NEXT_DUE: Sql = heads_its_chat!("SELECT MIN(next_attempt_at) AS t"; ""; ")");

/// The parts of a row being sent that were delivered: parts, id.
pub(crate) const PARTS_SENT: Sql =
    sql!("UPDATE outbox SET parts_sent = $1 WHERE id = $2 AND state = 'sending'");

/// Claim a pending row for sending: id.
pub(crate) const CLAIM: Sql = sql!(
    "UPDATE outbox SET state = 'sending', attempts = attempts + 1
     WHERE id = $1 AND state = 'pending'"
);

/// Put every row being sent back to pending (at start, one process per database).
pub(crate) const RESET_SENDING: Sql =
    sql!("UPDATE outbox SET state = 'pending' WHERE state = 'sending'");

/// A row delivered: now, id.
pub(crate) const SENT: Sql = sql!("UPDATE outbox SET state = 'sent', sent_at = $1 WHERE id = $2");

/// A failed attempt to retry at a time: error, retry_at, id.
pub(crate) const RETRY: Sql = sql!(
    "UPDATE outbox SET state = 'pending', last_error = $1, next_attempt_at = $2
     WHERE id = $3"
);

/// A failed attempt not retried: error, id.
pub(crate) const FAIL: Sql =
    sql!("UPDATE outbox SET last_error = $1, state = 'failed' WHERE id = $2");

/// Rows per state.
pub(crate) const COUNTS: Sql = sql!("SELECT state, COUNT(*) AS n FROM outbox GROUP BY state");

/// A row's state and attempts: key.
pub(crate) const STATE_OF: Sql = sql!("SELECT state, attempts FROM outbox WHERE key = $1");

/// A chat's pending rows due now: now, channel, chat_id.
pub(crate) const RETRY_CHAT_NOW: Sql = sql!(
    "UPDATE outbox SET next_attempt_at = $1
     WHERE state = 'pending' AND channel = $2 AND chat_id = $3 AND next_attempt_at > $1"
);

/// A row's chat and texts (tests): key.
#[cfg(test)]
pub(crate) const CHAT_OF: Sql =
    sql!("SELECT channel, chat_id, thread_id, text, footer FROM outbox WHERE key = $1");
