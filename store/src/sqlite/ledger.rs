//! The inbound ledger: attempts at handling each inbound update not yet done with (counted
//! before it is handled, so an attempt that kills the adapter still counts), the update
//! offset saved together with forgetting the attempts below it, and the updates skipped as
//! poisoned after failing too often.

use sqlx::Row;

use super::super::ledger::decode_poisoned;
use super::{now_ms, Result, Sqlite};
pub(super) use crate::ledger::*;

impl Sqlite {
    /// Save a channel's update offset and forget the attempts at the updates below it, in
    /// one transaction.
    pub async fn save_inbound_offset(
        &self,
        channel: &str,
        key: &str,
        next_offset: i64,
    ) -> Result<()> {
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        sqlx::query(crate::sql::channels::SET_STATE.sqlite)
            .bind(channel)
            .bind(key)
            .bind(next_offset.to_string())
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        sqlx::query(crate::sql::ledger::PRUNE.sqlite)
            .bind(channel)
            .bind(next_offset)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Count one more attempt at handling an inbound update; returns the attempts so far,
    /// this one included. Committed before the update is handled.
    pub async fn begin_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<i64> {
        let now = now_ms();
        let r = sqlx::query(crate::sql::ledger::ATTEMPT.sqlite)
            .bind(channel)
            .bind(update_id)
            .bind(now)
            .fetch_one(&mut *self.writer().await)
            .await?;
        Ok(r.try_get("attempts")?)
    }

    /// Take back the last attempt at an update (it was cut short by a shutdown).
    pub async fn uncount_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<()> {
        sqlx::query(crate::sql::ledger::UNDO_ATTEMPT.sqlite)
            .bind(channel)
            .bind(update_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Forget the attempts at an update that is done with.
    pub async fn forget_inbound_attempts(&self, channel: &str, update_id: i64) -> Result<()> {
        sqlx::query(crate::sql::ledger::FORGET.sqlite)
            .bind(channel)
            .bind(update_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Attempts counted at an update not yet done with (tests and diagnostics).
    pub async fn inbound_attempts(&self, channel: &str, update_id: i64) -> Result<i64> {
        let r = sqlx::query(crate::sql::ledger::ATTEMPTS.sqlite)
            .bind(channel)
            .bind(update_id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        Ok(r.map(|r| r.try_get("attempts")).transpose()?.unwrap_or(0))
    }

    /// Record an update as poisoned and forget its attempts, in one transaction. A second
    /// record of the same update keeps the first.
    pub async fn poison_inbound(&self, p: &PoisonedUpdate) -> Result<()> {
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        sqlx::query(crate::sql::ledger::POISON.sqlite)
            .bind(&p.channel)
            .bind(p.update_id)
            .bind(p.attempts)
            .bind(&p.reason)
            .bind(&p.summary)
            .bind(&p.payload)
            .bind(p.poisoned_at)
            .execute(&mut *tx)
            .await?;
        sqlx::query(crate::sql::ledger::FORGET.sqlite)
            .bind(&p.channel)
            .bind(p.update_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The updates of a channel recorded as poisoned, oldest first.
    pub async fn poisoned_updates(&self, channel: &str) -> Result<Vec<PoisonedUpdate>> {
        let rows = sqlx::query(crate::sql::ledger::POISONED.sqlite)
            .bind(channel)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_poisoned).collect()
    }

    /// Count of poisoned updates by channel (for metrics).
    pub async fn poisoned_counts(&self) -> Result<Vec<(String, i64)>> {
        let rows = sqlx::query(crate::sql::ledger::POISONED_COUNTS.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("channel")?, r.try_get("n")?)))
            .collect()
    }
}
