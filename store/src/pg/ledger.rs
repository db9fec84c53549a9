//! The inbound ledger on PostgreSQL: attempts at handling each inbound update, the update
//! offset saved together with forgetting the attempts below it, and poisoned updates.

use super::super::ledger::decode_poisoned;
use super::super::{now_ms, PoisonedUpdate, Result};
use super::Pg;

impl Pg {
    /// Save a channel's update offset and forget the attempts at the updates below it, in
    /// one transaction.
    pub async fn save_inbound_offset(
        &self,
        channel: &str,
        key: &str,
        next_offset: i64,
    ) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        write_offset(&mut tx, channel, key, next_offset).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Count one more attempt at handling an inbound update; the attempts so far, this one
    /// included.
    pub async fn begin_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<i64> {
        Ok(sqlx::query_scalar(crate::sql::ledger::ATTEMPT.pg)
            .bind(channel)
            .bind(update_id)
            .bind(now_ms())
            .fetch_one(&self.pool)
            .await?)
    }

    /// Take back the last attempt at an update (it was cut short by a shutdown).
    pub async fn uncount_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<()> {
        sqlx::query(crate::sql::ledger::UNDO_ATTEMPT.pg)
            .bind(channel)
            .bind(update_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Forget the attempts at an update that is done with.
    pub async fn forget_inbound_attempts(&self, channel: &str, update_id: i64) -> Result<()> {
        sqlx::query(crate::sql::ledger::FORGET.pg)
            .bind(channel)
            .bind(update_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Attempts counted at an update not yet done with.
    pub async fn inbound_attempts(&self, channel: &str, update_id: i64) -> Result<i64> {
        let n: Option<i64> = sqlx::query_scalar(crate::sql::ledger::ATTEMPTS.pg)
            .bind(channel)
            .bind(update_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(n.unwrap_or(0))
    }

    /// Record an update as poisoned and forget its attempts, in one transaction. A second
    /// record of the same update keeps the first.
    pub async fn poison_inbound(&self, p: &PoisonedUpdate) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(crate::sql::ledger::POISON.pg)
            .bind(&p.channel)
            .bind(p.update_id)
            .bind(p.attempts)
            .bind(&p.reason)
            .bind(&p.summary)
            .bind(&p.payload)
            .bind(p.poisoned_at)
            .execute(&mut *tx)
            .await?;
        sqlx::query(crate::sql::ledger::FORGET.pg)
            .bind(&p.channel)
            .bind(p.update_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The updates of a channel recorded as poisoned, oldest first.
    pub async fn poisoned_updates(&self, channel: &str) -> Result<Vec<PoisonedUpdate>> {
        let rows = sqlx::query(crate::sql::ledger::POISONED.pg)
            .bind(channel)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_poisoned).collect()
    }

    /// Count of poisoned updates by channel.
    pub async fn poisoned_counts(&self) -> Result<Vec<(String, i64)>> {
        Ok(sqlx::query_as(crate::sql::ledger::POISONED_COUNTS.pg)
            .fetch_all(&self.pool)
            .await?)
    }
}

/// The offset's statements on `c` (inside the caller's transaction): store the next offset
/// and forget the attempts counted for updates below it.
pub(super) async fn write_offset(
    c: &mut sqlx::PgConnection,
    channel: &str,
    key: &str,
    next_offset: i64,
) -> Result<()> {
    super::channels::upsert_state(&mut *c, channel, key, &next_offset.to_string()).await?;
    sqlx::query(crate::sql::ledger::PRUNE.pg)
        .bind(channel)
        .bind(next_offset)
        .execute(&mut *c)
        .await?;
    Ok(())
}
