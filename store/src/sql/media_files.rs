//! The statements of sent files' copies (`outbox.file`), the same on both engines.

use super::{sql, Sql};

/// The files still needed: unsent, or sent on a channel that keeps them since a time:
/// keep_channel, kept_since.
pub(crate) const KEPT: Sql = sql!(
    "SELECT file FROM outbox WHERE file IS NOT NULL
       AND (state IN ('pending', 'sending')
            OR (channel = $1 AND state = 'sent' AND COALESCE(sent_at, created_at) >= $2))"
);

/// The channel and file of an outbox row: key.
pub(crate) const OF_KEY: Sql =
    sql!("SELECT channel, file FROM outbox WHERE key = $1 AND file IS NOT NULL");
