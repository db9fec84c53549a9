//! Channels' statements (`channel_state`, `inbound_seen`, `pairings`), the same on both
//! engines. PostgreSQL's pairing request also takes its channel's advisory lock (its own).

use super::{sql, Sql};

/// An adapter's stored value: channel, key.
pub(crate) const STATE: Sql =
    sql!("SELECT value FROM channel_state WHERE channel = $1 AND key = $2");

/// Store an adapter's value: channel, key, value, now.
pub(crate) const SET_STATE: Sql = sql!(
    "INSERT INTO channel_state (channel, key, value, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (channel, key) DO UPDATE SET value = excluded.value,
         updated_at = excluded.updated_at"
);

/// A platform message id seen once (no row when seen before): channel, message_id, now.
pub(crate) const SEEN: Sql = sql!(
    "INSERT INTO inbound_seen (channel, message_id, seen_at) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING"
);

/// Expired requests and rejections of a channel dropped: channel, oldest kept.
pub(crate) const EXPIRE: Sql = sql!(
    "DELETE FROM pairings
     WHERE channel = $1 AND status IN ('pending', 'rejected') AND created_at <= $2"
);

/// A sender's pairing: channel, sender_id.
pub(crate) const OF_SENDER: Sql =
    sql!("SELECT code, status, notified_at FROM pairings WHERE channel = $1 AND sender_id = $2");

/// A pending request's owner told (again): now, channel, sender_id.
pub(crate) const NOTIFIED: Sql =
    sql!("UPDATE pairings SET notified_at = $1 WHERE channel = $2 AND sender_id = $3");

/// How many requests of a channel wait: channel.
pub(crate) const PENDING_COUNT: Sql =
    sql!("SELECT COUNT(*) FROM pairings WHERE channel = $1 AND status = 'pending'");

/// A new request: channel, sender_id, sender_name, code, now.
pub(crate) const REQUEST: Sql = sql!(
    "INSERT INTO pairings (channel, sender_id, sender_name, code, status, created_at,
         notified_at)
     VALUES ($1, $2, $3, $4, 'pending', $5, $5)"
);

/// Whether a sender was let in: channel, sender_id.
pub(crate) const APPROVED: Sql = sql!(
    "SELECT EXISTS (SELECT 1 FROM pairings
         WHERE channel = $1 AND sender_id = $2 AND status = 'approved')"
);

/// Approve an unexpired pending request by its code, the row returned: now, channel,
/// code, oldest valid.
pub(crate) const APPROVE: Sql = sql!(
    "UPDATE pairings SET status = 'approved', approved_at = $1
     WHERE channel = $2 AND code = $3 AND status = 'pending' AND created_at > $4
     RETURNING *"
);

/// Reject an unexpired pending request by its code (the sender waits a TTL before asking
/// again), the row returned: now, channel, code, oldest valid.
pub(crate) const REJECT: Sql = sql!(
    "UPDATE pairings SET status = 'rejected', created_at = $1
     WHERE channel = $2 AND code = $3 AND status = 'pending' AND created_at > $4
     RETURNING *"
);

/// Revoke an approved sender, the row returned: channel, sender_id.
pub(crate) const REVOKE: Sql = sql!(
    "DELETE FROM pairings WHERE channel = $1 AND sender_id = $2 AND status = 'approved'
     RETURNING *"
);

/// Approved senders and unexpired requests, newest first: oldest valid.
pub(crate) const LIST: Sql = sql!(
    "SELECT * FROM pairings WHERE status = 'approved' OR created_at > $1
     ORDER BY created_at DESC"
);
