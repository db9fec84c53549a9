//! Channel support rows on PostgreSQL: adapter state (Telegram's offset), inbound dedupe,
//! pairing. A pairing request reads before it writes: it holds a transaction-scoped
//! advisory lock of its channel, so two first contacts are serialized as SQLite's
//! `BEGIN IMMEDIATE` serializes them (and the per-channel bound of pending requests holds).

use sqlx::Row;

use super::super::channels::decode_pairing;
use super::super::channels::{new_code, normalized_code, RENOTIFY_MS};
use super::super::channels::{MAX_PENDING, PAIRING_TTL_MS};
use super::super::{now_ms, Pairing, PairingRow, Result};
use super::Pg;

impl Pg {
    pub async fn channel_state(&self, channel: &str, key: &str) -> Result<Option<String>> {
        Ok(sqlx::query_scalar(crate::sql::channels::STATE.pg)
            .bind(channel)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    pub async fn set_channel_state(&self, channel: &str, key: &str, value: &str) -> Result<()> {
        upsert_state(&self.pool, channel, key, value).await
    }

    /// Record that a platform message was taken; false if it was taken before.
    pub async fn mark_inbound_seen(&self, channel: &str, message_id: &str) -> Result<bool> {
        let r = sqlx::query(crate::sql::channels::SEEN.pg)
            .bind(channel)
            .bind(message_id)
            .bind(now_ms())
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// The pairing state of a sender, creating a pending pairing with a fresh code on
    /// first contact (unless the channel has [`MAX_PENDING`] waiting).
    pub async fn pairing_for(
        &self,
        channel: &str,
        sender_id: &str,
        sender_name: Option<&str>,
    ) -> Result<Pairing> {
        self.pairing_at(channel, sender_id, sender_name, now_ms())
            .await
    }

    pub(crate) async fn pairing_at(
        &self,
        channel: &str,
        sender_id: &str,
        sender_name: Option<&str>,
        now: i64,
    ) -> Result<Pairing> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('pairing:' || $1, 0))")
            .bind(channel)
            .execute(&mut *tx)
            .await?;
        sqlx::query(crate::sql::channels::EXPIRE.pg)
            .bind(channel)
            .bind(now - PAIRING_TTL_MS)
            .execute(&mut *tx)
            .await?;
        let row = sqlx::query(crate::sql::channels::OF_SENDER.pg)
            .bind(channel)
            .bind(sender_id)
            .fetch_optional(&mut *tx)
            .await?;
        let result = match row {
            Some(r) => {
                let status: String = r.try_get("status")?;
                if status == "approved" {
                    Pairing::Approved
                } else if status == "rejected" {
                    Pairing::Rejected
                } else {
                    let code: String = r.try_get("code")?;
                    let notified: i64 = r.try_get("notified_at")?;
                    let notify = now - notified >= RENOTIFY_MS;
                    if notify {
                        sqlx::query(crate::sql::channels::NOTIFIED.pg)
                            .bind(now)
                            .bind(channel)
                            .bind(sender_id)
                            .execute(&mut *tx)
                            .await?;
                    }
                    Pairing::Pending { code, notify }
                }
            }
            None => {
                let pending: i64 = sqlx::query_scalar(crate::sql::channels::PENDING_COUNT.pg)
                    .bind(channel)
                    .fetch_one(&mut *tx)
                    .await?;
                if pending >= MAX_PENDING {
                    Pairing::Full
                } else {
                    let code = new_code();
                    sqlx::query(crate::sql::channels::REQUEST.pg)
                        .bind(channel)
                        .bind(sender_id)
                        .bind(sender_name)
                        .bind(&code)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    Pairing::Pending { code, notify: true }
                }
            }
        };
        tx.commit().await?;
        Ok(result)
    }

    /// Whether `sender_id` was let in on `channel` by pairing (read only).
    pub async fn pairing_approved(&self, channel: &str, sender_id: &str) -> Result<bool> {
        Ok(sqlx::query_scalar(crate::sql::channels::APPROVED.pg)
            .bind(channel)
            .bind(sender_id)
            .fetch_one(&self.pool)
            .await?)
    }

    /// Approve a pending pairing by its code (case-insensitive, dashes ignored).
    pub async fn approve_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>> {
        let now = now_ms();
        let r = sqlx::query(crate::sql::channels::APPROVE.pg)
            .bind(now)
            .bind(channel)
            .bind(normalized_code(code))
            .bind(now - PAIRING_TTL_MS)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_pairing).transpose()
    }

    /// Reject a pending pairing by its code (no new code for [`PAIRING_TTL_MS`]).
    pub async fn reject_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>> {
        let now = now_ms();
        let r = sqlx::query(crate::sql::channels::REJECT.pg)
            .bind(now)
            .bind(channel)
            .bind(normalized_code(code))
            .bind(now - PAIRING_TTL_MS)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_pairing).transpose()
    }

    /// Revoke an approved sender: the row goes.
    pub async fn revoke_pairing(
        &self,
        channel: &str,
        sender_id: &str,
    ) -> Result<Option<PairingRow>> {
        let r = sqlx::query(crate::sql::channels::REVOKE.pg)
            .bind(channel)
            .bind(sender_id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_pairing).transpose()
    }

    pub async fn list_pairings(&self) -> Result<Vec<PairingRow>> {
        let rows = sqlx::query(crate::sql::channels::LIST.pg)
            .bind(now_ms() - PAIRING_TTL_MS)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_pairing).collect()
    }
}

/// Store `value` under (`channel`, `key`), replacing what was there.
pub(super) async fn upsert_state<'e, E>(ex: E, channel: &str, key: &str, value: &str) -> Result<()>
where
    E: sqlx::PgExecutor<'e>,
{
    sqlx::query(crate::sql::channels::SET_STATE.pg)
        .bind(channel)
        .bind(key)
        .bind(value)
        .bind(now_ms())
        .execute(ex)
        .await?;
    Ok(())
}
