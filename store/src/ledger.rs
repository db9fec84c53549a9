//! The inbound ledger's poisoned updates (both engines).

use super::decode::Columns;
use super::engine::engine_fns;
use super::Result;

/// An inbound update skipped for good after its handling failed too often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoisonedUpdate {
    pub channel: String,
    pub update_id: i64,
    pub attempts: i64,
    pub reason: String,
    /// What the update was, without its content.
    pub summary: String,
    /// The update as the platform sent it (possibly cut).
    pub payload: String,
    pub poisoned_at: i64,
}

/// An `inbound_poisoned` row, from either engine.
pub(super) fn decode_poisoned(r: &impl Columns) -> Result<PoisonedUpdate> {
    Ok(PoisonedUpdate {
        channel: r.string("channel")?,
        update_id: r.int("update_id")?,
        attempts: r.int("attempts")?,
        reason: r.string("reason")?,
        summary: r.string("summary")?,
        payload: r.string("payload")?,
        poisoned_at: r.int("poisoned_at")?,
    })
}

engine_fns! {
    /// Save a channel's update offset and forget the attempts at the updates below it, in
    /// one transaction.
    pub async fn save_inbound_offset(&self, channel: &str, key: &str, next_offset: i64) -> Result<()>;
    /// Count one more attempt at handling an inbound update; returns the attempts so far,
    /// this one included. Committed before the update is handled.
    pub async fn begin_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<i64>;
    /// Take back the last attempt at an update (it was cut short by a shutdown).
    pub async fn uncount_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<()>;
    /// Forget the attempts at an update that is done with.
    pub async fn forget_inbound_attempts(&self, channel: &str, update_id: i64) -> Result<()>;
    /// Attempts counted at an update not yet done with (tests and diagnostics).
    pub async fn inbound_attempts(&self, channel: &str, update_id: i64) -> Result<i64>;
    /// Record an update as poisoned and forget its attempts, in one transaction. A second
    /// record of the same update keeps the first.
    pub async fn poison_inbound(&self, p: &PoisonedUpdate) -> Result<()>;
    /// The updates of a channel recorded as poisoned, oldest first.
    pub async fn poisoned_updates(&self, channel: &str) -> Result<Vec<PoisonedUpdate>>;
    /// Count of poisoned updates by channel (for metrics).
    pub async fn poisoned_counts(&self) -> Result<Vec<(String, i64)>>;
}
