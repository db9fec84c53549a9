//! The inbound ledger's statements (`inbound_attempts`, `inbound_poisoned`), the same on
//! both engines; the offset itself is `channels::SET_STATE`.

use super::{sql, Sql};

/// Attempts at updates below a channel's new offset forgotten: channel, offset.
pub(crate) const PRUNE: Sql =
    sql!("DELETE FROM inbound_attempts WHERE channel = $1 AND update_id < $2");

/// One more attempt counted, the count returned: channel, update_id, now.
pub(crate) const ATTEMPT: Sql = sql!(
    "INSERT INTO inbound_attempts (channel, update_id, attempts, first_at, last_at)
     VALUES ($1, $2, 1, $3, $3)
     ON CONFLICT (channel, update_id) DO UPDATE
         SET attempts = inbound_attempts.attempts + 1, last_at = excluded.last_at
     RETURNING attempts"
);

/// An attempt taken back: channel, update_id.
pub(crate) const UNDO_ATTEMPT: Sql = sql!(
    "UPDATE inbound_attempts SET attempts = attempts - 1
     WHERE channel = $1 AND update_id = $2 AND attempts > 0"
);

/// An update's attempts forgotten: channel, update_id.
pub(crate) const FORGET: Sql =
    sql!("DELETE FROM inbound_attempts WHERE channel = $1 AND update_id = $2");

/// An update's attempts: channel, update_id.
pub(crate) const ATTEMPTS: Sql =
    sql!("SELECT attempts FROM inbound_attempts WHERE channel = $1 AND update_id = $2");

/// An update recorded as poisoned, the first record kept: channel, update_id, attempts,
/// reason, summary, payload, poisoned_at.
pub(crate) const POISON: Sql = sql!(
    "INSERT INTO inbound_poisoned (channel, update_id, attempts, reason, summary, payload,
         poisoned_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (channel, update_id) DO NOTHING"
);

/// A channel's poisoned updates, oldest first: channel.
pub(crate) const POISONED: Sql =
    sql!("SELECT * FROM inbound_poisoned WHERE channel = $1 ORDER BY poisoned_at, update_id");

/// Poisoned updates counted per channel.
pub(crate) const POISONED_COUNTS: Sql =
    sql!("SELECT channel, COUNT(*) AS n FROM inbound_poisoned GROUP BY channel ORDER BY channel");
