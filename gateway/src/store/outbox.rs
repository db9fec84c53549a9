//! The outbox: every message bound for a channel, at most once per idempotency key,
//! with delivery state, attempts and the time of the next attempt.

use sqlx::Row;
use switchboard_channels::Origin;

use super::{from_json, now_ms, to_json, Result, Store};

#[derive(Debug, Clone, PartialEq)]
pub struct OutboxRow {
    pub id: i64,
    pub key: String,
    pub origin: Origin,
    pub text: String,
    pub attempts: i64,
}

pub(super) struct NewOutbox<'a> {
    pub key: &'a str,
    pub origin: &'a Origin,
    pub text: &'a str,
}

/// Insert unless the key exists already (idempotent). Returns whether a row was added.
pub(super) async fn insert_outbox<'e, E>(ex: E, m: &NewOutbox<'_>) -> Result<bool>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    let now = now_ms();
    let r = sqlx::query(
        "INSERT INTO outbox (key, channel, origin, text, next_attempt_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING",
    )
    .bind(m.key)
    .bind(&m.origin.channel)
    .bind(to_json(m.origin)?)
    .bind(m.text)
    .bind(now)
    .bind(now)
    .execute(ex)
    .await?;
    Ok(r.rows_affected() == 1)
}

impl Store {
    /// Queue a message for delivery. A second call with the same key is a no-op.
    pub async fn enqueue_outbox(&self, key: &str, origin: &Origin, text: &str) -> Result<bool> {
        insert_outbox(&mut *self.writer().await, &NewOutbox { key, origin, text }).await
    }

    /// Pending messages whose next attempt is due, oldest first.
    pub async fn due_outbox(&self, limit: i64) -> Result<Vec<OutboxRow>> {
        let rows = sqlx::query(
            "SELECT id, key, origin, text, attempts FROM outbox
             WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY id LIMIT ?",
        )
        .bind(now_ms())
        .bind(limit)
        .fetch_all(&mut *self.reader().await)
        .await?;
        rows.iter()
            .map(|r| {
                let origin: String = r.try_get("origin")?;
                Ok(OutboxRow {
                    id: r.try_get("id")?,
                    key: r.try_get("key")?,
                    origin: from_json(&origin)?,
                    text: r.try_get("text")?,
                    attempts: r.try_get("attempts")?,
                })
            })
            .collect()
    }

    /// When the earliest pending message is due (unix ms), if any.
    pub async fn next_outbox_due(&self) -> Result<Option<i64>> {
        let r = sqlx::query("SELECT MIN(next_attempt_at) AS t FROM outbox WHERE state = 'pending'")
            .fetch_one(&mut *self.reader().await)
            .await?;
        Ok(r.try_get("t")?)
    }

    /// Claim a pending row for sending (state `sending`). Returns false if another worker
    /// claimed it or it is no longer pending, so a stale read never sends a row twice.
    pub async fn claim_outbox(&self, id: i64) -> Result<bool> {
        let r = sqlx::query(
            "UPDATE outbox SET state = 'sending', attempts = attempts + 1 WHERE id = ? AND state = 'pending'",
        )
        .bind(id)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    /// At start: rows that were being sent when the process died go back to pending. (The
    /// channel may or may not have received them; this is the one at-least-once window.)
    pub async fn reset_sending_outbox(&self) -> Result<u64> {
        let r = sqlx::query("UPDATE outbox SET state = 'pending' WHERE state = 'sending'")
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected())
    }

    pub async fn mark_outbox_sent(&self, id: i64) -> Result<()> {
        sqlx::query("UPDATE outbox SET state = 'sent', sent_at = ? WHERE id = ?")
            .bind(now_ms())
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Record a failed attempt; `retry_at` None means give up (state `failed`).
    pub async fn mark_outbox_failed(
        &self,
        id: i64,
        error: &str,
        retry_at: Option<i64>,
    ) -> Result<()> {
        match retry_at {
            Some(at) => {
                sqlx::query("UPDATE outbox SET state = 'pending', last_error = ?, next_attempt_at = ? WHERE id = ?")
                    .bind(error)
                    .bind(at)
                    .bind(id)
                    .execute(&mut *self.writer().await)
                    .await?
            }
            None => {
                sqlx::query("UPDATE outbox SET last_error = ?, state = 'failed' WHERE id = ?")
                    .bind(error)
                    .bind(id)
                    .execute(&mut *self.writer().await)
                    .await?
            }
        };
        Ok(())
    }

    /// Count of outbox rows by state (for metrics).
    pub async fn outbox_counts(&self) -> Result<Vec<(String, i64)>> {
        let rows = sqlx::query("SELECT state, COUNT(*) AS n FROM outbox GROUP BY state")
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("state")?, r.try_get("n")?)))
            .collect()
    }

    /// Look up an outbox row's state by key (tests and diagnostics).
    pub async fn outbox_state(&self, key: &str) -> Result<Option<(String, i64)>> {
        let r = sqlx::query("SELECT state, attempts FROM outbox WHERE key = ?")
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.map(|r| Ok((r.try_get("state")?, r.try_get("attempts")?)))
            .transpose()
    }
}

impl Store {
    /// Make pending messages for one chat due now (its recipient just came back, e.g. a
    /// browser reconnected). Returns how many rows were moved forward.
    pub async fn retry_chat_now(&self, channel: &str, chat_id: &str) -> Result<u64> {
        let r = sqlx::query(
            "UPDATE outbox SET next_attempt_at = ?
             WHERE state = 'pending' AND channel = ? AND json_extract(origin, '$.chatId') = ? AND next_attempt_at > ?",
        )
        .bind(now_ms())
        .bind(channel)
        .bind(chat_id)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(r.rows_affected())
    }
}
