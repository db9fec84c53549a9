//! Telegram's offset store: the update offset (in `channel_state`), written under the
//! fence of the lease that says which process polls (the `gateway` lease in standby mode,
//! `channel:telegram` in shared mode; unfenced on SQLite), and the ledger of update
//! attempts and poisoned updates.

use async_trait::async_trait;
use switchboard_channels::telegram::{self, LedgerError, OffsetStore, Poisoned};

use crate::channels::FenceSlot;
use crate::store::{now_ms, PoisonedUpdate, Store};

/// Telegram's update offset (in `channel_state`) and its ledger of update attempts and
/// poisoned updates, in the store.
pub(super) struct StoreOffsets {
    pub(super) store: Store,
    /// Set on PostgreSQL: the offset moves only while this lease is still ours.
    pub(super) fence: Option<FenceSlot>,
}

const OFFSET_KEY: &str = "offset";

#[async_trait]
impl OffsetStore for StoreOffsets {
    async fn load(&self) -> Option<i64> {
        match self
            .store
            .channel_state(telegram::CHANNEL_ID, OFFSET_KEY)
            .await
        {
            Ok(v) => v.and_then(|v| v.parse().ok()),
            Err(e) => {
                tracing::error!(error = %e, "telegram: cannot read the stored offset");
                None
            }
        }
    }

    async fn save(&self, next_offset: i64) {
        let (channel, key) = (telegram::CHANNEL_ID, OFFSET_KEY);
        let fence = self.fence.as_ref().map(|slot| slot.lock().clone());
        let saved = match fence {
            None => {
                self.store
                    .save_inbound_offset(channel, key, next_offset)
                    .await
            }
            Some(None) => {
                tracing::error!(
                    next_offset,
                    "telegram: this process does not hold the channel; the offset stays"
                );
                Ok(())
            }
            Some(Some(lease)) => match self
                .store
                .save_inbound_offset_fenced(channel, key, next_offset, &lease)
                .await
            {
                Ok(true) => Ok(()),
                Ok(false) => {
                    // The lease's keeper notices the loss at its next look and stops
                    // the poller (shared mode) or the process (standby mode).
                    tracing::error!(
                        next_offset,
                        "telegram: the {} lease changed hands; the offset stays for the new holder",
                        lease.name
                    );
                    Ok(())
                }
                Err(e) => Err(e),
            },
        };
        if let Err(e) = saved {
            tracing::error!(error = %e, "telegram: cannot store the offset");
        }
    }

    async fn begin_attempt(&self, update_id: i64) -> Result<u32, LedgerError> {
        let n = self
            .store
            .begin_inbound_attempt(telegram::CHANNEL_ID, update_id)
            .await
            .map_err(|e| LedgerError(e.to_string()))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    async fn interrupted(&self, update_id: i64) {
        if let Err(e) = self
            .store
            .uncount_inbound_attempt(telegram::CHANNEL_ID, update_id)
            .await
        {
            tracing::warn!(update_id, error = %e, "telegram: cannot take back an interrupted attempt");
        }
    }

    async fn handled(&self, update_id: i64) {
        if let Err(e) = self
            .store
            .forget_inbound_attempts(telegram::CHANNEL_ID, update_id)
            .await
        {
            tracing::warn!(update_id, error = %e, "telegram: cannot clear a handled update's attempts");
        }
    }

    async fn poison(&self, record: &Poisoned) -> Result<(), LedgerError> {
        let row = PoisonedUpdate {
            channel: telegram::CHANNEL_ID.to_string(),
            update_id: record.update_id,
            attempts: i64::from(record.attempts),
            reason: record.reason.clone(),
            summary: record.summary.clone(),
            payload: record.payload.clone(),
            poisoned_at: now_ms(),
        };
        self.store
            .poison_inbound(&row)
            .await
            .map_err(|e| LedgerError(e.to_string()))
    }
}
