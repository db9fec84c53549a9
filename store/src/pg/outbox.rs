//! The outbox on PostgreSQL: every message bound for a channel, at most once per key, and
//! its delivery state. A chat's rows leave in order (none is due while an earlier row of
//! its chat is pending or being sent); claiming a row is a conditional UPDATE, so two
//! workers never both send it.

use switchboard_channels::{Action, Origin};

use super::super::outbox::decode_outbox;
use super::super::{now_ms, to_json, OutboxRow, Result};
use super::Pg;

impl Pg {
    /// Queue a message for delivery. A second call with the same key is a no-op.
    pub async fn enqueue_outbox(&self, key: &str, origin: &Origin, text: &str) -> Result<bool> {
        self.enqueue_outbox_with_actions(key, origin, text, &[])
            .await
    }

    /// [`Pg::enqueue_outbox`] with buttons under the message.
    pub async fn enqueue_outbox_with_actions(
        &self,
        key: &str,
        origin: &Origin,
        text: &str,
        actions: &[Action],
    ) -> Result<bool> {
        let now = now_ms();
        let r = sqlx::query(
            "INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, actions,
                 next_attempt_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(&origin.channel)
        .bind(&origin.chat_id)
        .bind(&origin.thread_id)
        .bind(to_json(origin)?)
        .bind(text)
        .bind(if actions.is_empty() {
            None
        } else {
            Some(to_json(&actions)?)
        })
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    /// [`Pg::enqueue_outbox`] with a file.
    pub async fn enqueue_outbox_with_file(
        &self,
        key: &str,
        origin: &Origin,
        text: &str,
        file: &switchboard_channels::OutboundFile,
    ) -> Result<bool> {
        let now = now_ms();
        let r = sqlx::query(
            "INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, file,
                 next_attempt_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(&origin.channel)
        .bind(&origin.chat_id)
        .bind(&origin.thread_id)
        .bind(to_json(origin)?)
        .bind(text)
        .bind(to_json(file)?)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Pending messages whose next attempt is due, oldest first, without any row that an
    /// earlier row of its chat holds back (one being sent, or pending and not yet due).
    pub async fn due_outbox(&self, limit: i64) -> Result<Vec<OutboxRow>> {
        let rows = sqlx::query(
            "SELECT id, key, origin, text, footer, actions, file, attempts, parts_sent FROM outbox o
             WHERE state = 'pending' AND next_attempt_at <= $1
               AND NOT EXISTS (SELECT 1 FROM outbox e
                   WHERE e.channel = o.channel AND e.chat_id IS NOT DISTINCT FROM o.chat_id
                     AND e.thread_id IS NOT DISTINCT FROM o.thread_id AND e.id < o.id
                     AND e.state IN ('pending', 'sending')
                     AND (e.state = 'sending' OR e.next_attempt_at > $1))
             ORDER BY id LIMIT $2",
        )
        .bind(now_ms())
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_outbox).collect()
    }

    /// When the earliest pending message that heads its chat is due (unix ms), if any.
    pub async fn next_outbox_due(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT MIN(next_attempt_at) FROM outbox o
             WHERE state = 'pending'
               AND NOT EXISTS (SELECT 1 FROM outbox e
                   WHERE e.channel = o.channel AND e.chat_id IS NOT DISTINCT FROM o.chat_id
                     AND e.thread_id IS NOT DISTINCT FROM o.thread_id AND e.id < o.id
                     AND e.state IN ('pending', 'sending'))",
        )
        .fetch_one(&self.pool)
        .await?)
    }

    /// Record that the first `parts` parts of a message being sent were delivered.
    pub async fn mark_outbox_progress(&self, id: i64, parts: i64) -> Result<()> {
        sqlx::query("UPDATE outbox SET parts_sent = $1 WHERE id = $2 AND state = 'sending'")
            .bind(parts)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Claim a pending row for sending; false if it is no longer pending.
    pub async fn claim_outbox(&self, id: i64) -> Result<bool> {
        let r = sqlx::query(
            "UPDATE outbox SET state = 'sending', attempts = attempts + 1
             WHERE id = $1 AND state = 'pending'",
        )
        .bind(id)
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    /// At start: rows that were being sent when the process died go back to pending.
    pub async fn reset_sending_outbox(&self) -> Result<u64> {
        // Shared mode: only rows whose sender's lease has expired (or that no process of
        // this mode claimed); another live process may be sending the rest right now.
        let sql = if self.member.is_some() {
            "UPDATE outbox SET state = 'pending'
              WHERE state = 'sending'
                AND (lease_owner IS NULL OR lease_expires_at < switchboard_now_ms())"
        } else {
            "UPDATE outbox SET state = 'pending' WHERE state = 'sending'"
        };
        let r = sqlx::query(sql).execute(&self.pool).await?;
        Ok(r.rows_affected())
    }

    pub async fn mark_outbox_sent(&self, id: i64) -> Result<()> {
        sqlx::query("UPDATE outbox SET state = 'sent', sent_at = $1 WHERE id = $2")
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
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
                sqlx::query(
                    "UPDATE outbox SET state = 'pending', last_error = $1, next_attempt_at = $2
                     WHERE id = $3",
                )
                .bind(error)
                .bind(at)
                .bind(id)
                .execute(&self.pool)
                .await?
            }
            None => {
                sqlx::query("UPDATE outbox SET last_error = $1, state = 'failed' WHERE id = $2")
                    .bind(error)
                    .bind(id)
                    .execute(&self.pool)
                    .await?
            }
        };
        Ok(())
    }

    /// Count of outbox rows by state.
    pub async fn outbox_counts(&self) -> Result<Vec<(String, i64)>> {
        Ok(
            sqlx::query_as("SELECT state, COUNT(*) AS n FROM outbox GROUP BY state")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// An outbox row's state and attempts by key.
    pub async fn outbox_state(&self, key: &str) -> Result<Option<(String, i64)>> {
        Ok(
            sqlx::query_as("SELECT state, attempts FROM outbox WHERE key = $1")
                .bind(key)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// Make pending messages for one chat due now. Returns how many rows moved forward.
    pub async fn retry_chat_now(&self, channel: &str, chat_id: &str) -> Result<u64> {
        let r = sqlx::query(
            "UPDATE outbox SET next_attempt_at = $1
             WHERE state = 'pending' AND channel = $2 AND chat_id = $3 AND next_attempt_at > $1",
        )
        .bind(now_ms())
        .bind(channel)
        .bind(chat_id)
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected())
    }

    #[cfg(test)]
    pub(crate) async fn outbox_chat_for_tests(
        &self,
        key: &str,
    ) -> Result<(String, String, Option<String>, String, Option<String>)> {
        Ok(sqlx::query_as(
            "SELECT channel, chat_id, thread_id, text, footer FROM outbox WHERE key = $1",
        )
        .bind(key)
        .fetch_one(&self.pool)
        .await?)
    }
}
