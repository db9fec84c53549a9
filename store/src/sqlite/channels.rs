//! Channel support rows: adapter state (Telegram's offset), inbound dedupe, pairing.

use sqlx::Row;

use super::super::channels::decode_pairing;
use super::{now_ms, Result, Sqlite};
pub(super) use crate::channels::*;

impl Sqlite {
    pub async fn channel_state(&self, channel: &str, key: &str) -> Result<Option<String>> {
        let r = sqlx::query(crate::sql::channels::STATE.sqlite)
            .bind(channel)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.map(|r| Ok(r.try_get("value")?)).transpose()
    }

    pub async fn set_channel_state(&self, channel: &str, key: &str, value: &str) -> Result<()> {
        sqlx::query(crate::sql::channels::SET_STATE.sqlite)
            .bind(channel)
            .bind(key)
            .bind(value)
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Record that a platform message was taken; false if it was taken before.
    pub async fn mark_inbound_seen(&self, channel: &str, message_id: &str) -> Result<bool> {
        let r = sqlx::query(crate::sql::channels::SEEN.sqlite)
            .bind(channel)
            .bind(message_id)
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// The pairing state of a sender, creating a pending pairing with a fresh code on
    /// first contact (unless the channel has [`MAX_PENDING`] waiting). Requests older than
    /// [`PAIRING_TTL_MS`] expire.
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
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        sqlx::query(crate::sql::channels::EXPIRE.sqlite)
            .bind(channel)
            .bind(now - PAIRING_TTL_MS)
            .execute(&mut *tx)
            .await?;
        let row = sqlx::query(crate::sql::channels::OF_SENDER.sqlite)
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
                        sqlx::query(crate::sql::channels::NOTIFIED.sqlite)
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
                let pending: i64 = sqlx::query_scalar(crate::sql::channels::PENDING_COUNT.sqlite)
                    .bind(channel)
                    .fetch_one(&mut *tx)
                    .await?;
                if pending >= MAX_PENDING {
                    Pairing::Full
                } else {
                    let code = new_code();
                    sqlx::query(crate::sql::channels::REQUEST.sqlite)
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

    /// Whether `sender_id` was let in on `channel` by pairing (read only: unlike
    /// [`Self::pairing_for`], a stranger gets no code).
    pub async fn pairing_approved(&self, channel: &str, sender_id: &str) -> Result<bool> {
        let approved: bool = sqlx::query_scalar(crate::sql::channels::APPROVED.sqlite)
            .bind(channel)
            .bind(sender_id)
            .fetch_one(&mut *self.reader().await)
            .await?;
        Ok(approved)
    }

    /// Approve a pending pairing by its code (case-insensitive, dashes ignored).
    pub async fn approve_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>> {
        let code = normalized_code(code);
        let r = sqlx::query(crate::sql::channels::APPROVE.sqlite)
            .bind(now_ms())
            .bind(channel)
            .bind(&code)
            .bind(now_ms() - PAIRING_TTL_MS)
            .fetch_optional(&mut *self.writer().await)
            .await?;
        r.as_ref().map(decode_pairing).transpose()
    }

    /// Reject a pending pairing by its code: the sender is ignored, and gets no new code
    /// for [`PAIRING_TTL_MS`] (the rejection's clock is the row's `created_at`).
    pub async fn reject_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>> {
        let r = sqlx::query(crate::sql::channels::REJECT.sqlite)
            .bind(now_ms())
            .bind(channel)
            .bind(normalized_code(code))
            .bind(now_ms() - PAIRING_TTL_MS)
            .fetch_optional(&mut *self.writer().await)
            .await?;
        r.as_ref().map(decode_pairing).transpose()
    }

    /// Revoke an approved sender: the row goes, so their next message is a stranger's
    /// again (a new pairing code under dmPolicy "pairing").
    pub async fn revoke_pairing(
        &self,
        channel: &str,
        sender_id: &str,
    ) -> Result<Option<PairingRow>> {
        let r = sqlx::query(crate::sql::channels::REVOKE.sqlite)
            .bind(channel)
            .bind(sender_id)
            .fetch_optional(&mut *self.writer().await)
            .await?;
        r.as_ref().map(decode_pairing).transpose()
    }

    pub async fn list_pairings(&self) -> Result<Vec<PairingRow>> {
        let rows = sqlx::query(crate::sql::channels::LIST.sqlite)
            .bind(now_ms() - PAIRING_TTL_MS)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_pairing).collect()
    }
}
