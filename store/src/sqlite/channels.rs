//! Channel support rows: adapter state (Telegram's offset), inbound dedupe, pairing.

use sqlx::Row;

use super::super::channels::decode_pairing;
use super::{now_ms, Result, Sqlite};
pub(super) use crate::channels::*;

impl Sqlite {
    pub async fn channel_state(&self, channel: &str, key: &str) -> Result<Option<String>> {
        let r = sqlx::query("SELECT value FROM channel_state WHERE channel = ? AND key = ?")
            .bind(channel)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.map(|r| Ok(r.try_get("value")?)).transpose()
    }

    pub async fn set_channel_state(&self, channel: &str, key: &str, value: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO channel_state (channel, key, value, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(channel, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
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
        let r = sqlx::query("INSERT INTO inbound_seen (channel, message_id, seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
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
        sqlx::query(
            "DELETE FROM pairings WHERE channel = ? AND status IN ('pending', 'rejected') AND created_at <= ?",
        )
        .bind(channel)
        .bind(now - PAIRING_TTL_MS)
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query(
            "SELECT code, status, notified_at FROM pairings WHERE channel = ? AND sender_id = ?",
        )
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
                        sqlx::query("UPDATE pairings SET notified_at = ? WHERE channel = ? AND sender_id = ?")
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
                let pending: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM pairings WHERE channel = ? AND status = 'pending'",
                )
                .bind(channel)
                .fetch_one(&mut *tx)
                .await?;
                if pending >= MAX_PENDING {
                    Pairing::Full
                } else {
                    let code = new_code();
                    sqlx::query(
                        "INSERT INTO pairings (channel, sender_id, sender_name, code, status, created_at, notified_at)
                         VALUES (?, ?, ?, ?, 'pending', ?, ?)",
                    )
                    .bind(channel)
                    .bind(sender_id)
                    .bind(sender_name)
                    .bind(&code)
                    .bind(now)
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
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pairings WHERE channel = ? AND sender_id = ? AND status = 'approved'",
        )
        .bind(channel)
        .bind(sender_id)
        .fetch_one(&mut *self.reader().await)
        .await?;
        Ok(n > 0)
    }

    /// Approve a pending pairing by its code (case-insensitive, dashes ignored).
    pub async fn approve_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>> {
        let code = normalized_code(code);
        let r = sqlx::query(
            "UPDATE pairings SET status = 'approved', approved_at = ?
             WHERE channel = ? AND code = ? AND status = 'pending' AND created_at > ? RETURNING *",
        )
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
        let r = sqlx::query(
            "UPDATE pairings SET status = 'rejected', created_at = ?
             WHERE channel = ? AND code = ? AND status = 'pending' AND created_at > ? RETURNING *",
        )
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
        let r = sqlx::query(
            "DELETE FROM pairings WHERE channel = ? AND sender_id = ? AND status = 'approved' RETURNING *",
        )
        .bind(channel)
        .bind(sender_id)
        .fetch_optional(&mut *self.writer().await)
        .await?;
        r.as_ref().map(decode_pairing).transpose()
    }

    pub async fn list_pairings(&self) -> Result<Vec<PairingRow>> {
        let rows = sqlx::query(
            "SELECT * FROM pairings WHERE status = 'approved' OR created_at > ? ORDER BY created_at DESC",
        )
        .bind(now_ms() - PAIRING_TTL_MS)
        .fetch_all(&mut *self.reader().await)
        .await?;
        rows.iter().map(decode_pairing).collect()
    }
}
