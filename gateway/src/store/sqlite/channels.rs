//! Channel support rows: adapter state (Telegram's offset), inbound dedupe, pairing.

use sqlx::Row;

use super::{now_ms, Result, Sqlite};
pub(super) use crate::store::channels::*;

/// How often a pending sender is reminded of their code.
const RENOTIFY_MS: i64 = 10 * 60 * 1000;

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
        r.as_ref().map(row_to_pairing).transpose()
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
        r.as_ref().map(row_to_pairing).transpose()
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
        r.as_ref().map(row_to_pairing).transpose()
    }

    pub async fn list_pairings(&self) -> Result<Vec<PairingRow>> {
        let rows = sqlx::query(
            "SELECT * FROM pairings WHERE status = 'approved' OR created_at > ? ORDER BY created_at DESC",
        )
        .bind(now_ms() - PAIRING_TTL_MS)
        .fetch_all(&mut *self.reader().await)
        .await?;
        rows.iter().map(row_to_pairing).collect()
    }
}

/// A code as typed by an operator: case and dashes do not matter.
fn normalized_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_uppercase()
}

fn row_to_pairing(r: &sqlx::sqlite::SqliteRow) -> Result<PairingRow> {
    Ok(PairingRow {
        channel: r.try_get("channel")?,
        sender_id: r.try_get("sender_id")?,
        sender_name: r.try_get("sender_name")?,
        code: r.try_get("code")?,
        status: r.try_get("status")?,
        created_at: r.try_get("created_at")?,
        approved_at: r.try_get("approved_at")?,
    })
}

/// Eight characters from an alphabet without look-alikes (no 0/O, 1/I/L).
fn new_code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
    let bytes = uuid::Uuid::new_v4().into_bytes();
    bytes
        .iter()
        .take(8)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pairing_flow_and_dedupe() {
        let store = Sqlite::open_in_memory().await.unwrap();
        let Pairing::Pending { code, notify: true } = store
            .pairing_for("telegram", "42", Some("@ann"))
            .await
            .unwrap()
        else {
            panic!("first contact is pending and notified")
        };
        assert_eq!(
            store.pairing_for("telegram", "42", None).await.unwrap(),
            Pairing::Pending {
                code: code.clone(),
                notify: false
            }
        );
        assert_eq!(
            store.approve_pairing("telegram", "NOPE").await.unwrap(),
            None
        );
        let approved = store
            .approve_pairing("telegram", &code.to_lowercase())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (approved.sender_id.as_str(), approved.status.as_str()),
            ("42", "approved")
        );
        assert_eq!(
            store.pairing_for("telegram", "42", None).await.unwrap(),
            Pairing::Approved
        );
        assert!(store.mark_inbound_seen("telegram", "1:7").await.unwrap());
        assert!(store
            .list_pairings()
            .await
            .unwrap()
            .iter()
            .any(|p| p.sender_id == "42"));
        assert!(!store.mark_inbound_seen("telegram", "1:7").await.unwrap());
        store
            .set_channel_state("telegram", "offset", "12")
            .await
            .unwrap();
        store
            .set_channel_state("telegram", "offset", "13")
            .await
            .unwrap();
        assert_eq!(
            store
                .channel_state("telegram", "offset")
                .await
                .unwrap()
                .as_deref(),
            Some("13")
        );
    }

    /// Catches: a rejected sender getting a fresh code at once (the rejection undone by
    /// writing again), or a revoked sender still let in.
    #[tokio::test]
    async fn rejected_senders_wait_and_revoked_senders_start_over() {
        let store = Sqlite::open_in_memory().await.unwrap();
        let Pairing::Pending { code, .. } = store.pairing_for("telegram", "7", None).await.unwrap()
        else {
            panic!("pending")
        };
        let rejected = store
            .reject_pairing("telegram", &code)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(rejected.status, "rejected");
        assert_eq!(
            store.pairing_for("telegram", "7", None).await.unwrap(),
            Pairing::Rejected
        );
        assert_eq!(
            store.approve_pairing("telegram", &code).await.unwrap(),
            None,
            "no longer pending"
        );
        let later = now_ms() + PAIRING_TTL_MS + 1;
        assert!(matches!(
            store
                .pairing_at("telegram", "7", None, later)
                .await
                .unwrap(),
            Pairing::Pending { notify: true, .. }
        ));

        let Pairing::Pending { code, .. } = store.pairing_for("discord", "8", None).await.unwrap()
        else {
            panic!("pending")
        };
        store
            .approve_pairing("discord", &code)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(store.revoke_pairing("discord", "9").await.unwrap(), None);
        let revoked = store.revoke_pairing("discord", "8").await.unwrap().unwrap();
        assert_eq!(revoked.sender_id, "8");
        assert!(matches!(
            store.pairing_for("discord", "8", None).await.unwrap(),
            Pairing::Pending { notify: true, .. }
        ));
    }

    /// Requests expire after an hour (the sender gets a new code), and a channel holds at
    /// most `MAX_PENDING` of them: the table does not grow with every stranger.
    #[tokio::test]
    async fn pairing_requests_expire_and_are_capped_per_channel() {
        let store = Sqlite::open_in_memory().await.unwrap();
        let t0 = now_ms();
        let Pairing::Pending { code: old, .. } =
            store.pairing_at("telegram", "1", None, t0).await.unwrap()
        else {
            panic!("pending")
        };
        for i in 2..=MAX_PENDING {
            let p = store
                .pairing_at("telegram", &i.to_string(), None, t0)
                .await
                .unwrap();
            assert!(
                matches!(p, Pairing::Pending { notify: true, .. }),
                "{i}: {p:?}"
            );
        }
        assert_eq!(
            store
                .pairing_at("telegram", "stranger", None, t0)
                .await
                .unwrap(),
            Pairing::Full
        );
        // Other channels have their own cap.
        assert!(matches!(
            store
                .pairing_at("discord", "stranger", None, t0)
                .await
                .unwrap(),
            Pairing::Pending { .. }
        ));
        // An hour later every request has expired: room again, and a new code.
        let later = t0 + PAIRING_TTL_MS + 1;
        let Pairing::Pending {
            code: new,
            notify: true,
        } = store
            .pairing_at("telegram", "1", None, later)
            .await
            .unwrap()
        else {
            panic!("a new request")
        };
        assert_ne!(old, new);
        let count: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM pairings WHERE channel = 'telegram'")
                .fetch_one(&mut *store.reader().await)
                .await
                .unwrap();
        assert_eq!(count, 1, "expired requests are deleted");
        // An expired code cannot be approved.
        assert_eq!(store.approve_pairing("telegram", &old).await.unwrap(), None);
    }
}
