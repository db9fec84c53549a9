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
        let r = sqlx::query(crate::sql::outbox::INSERT_WITH_ACTIONS.pg)
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
        let r = sqlx::query(crate::sql::outbox::INSERT_WITH_FILE.pg)
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
        let rows = sqlx::query(crate::sql::outbox::DUE.pg)
            .bind(now_ms())
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_outbox).collect()
    }

    /// When the earliest pending message that heads its chat is due (unix ms), if any.
    pub async fn next_outbox_due(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(crate::sql::outbox::NEXT_DUE.pg)
            .fetch_one(&self.pool)
            .await?)
    }

    /// Record that the first `parts` parts of a message being sent were delivered.
    pub async fn mark_outbox_progress(&self, id: i64, parts: i64) -> Result<()> {
        sqlx::query(crate::sql::outbox::PARTS_SENT.pg)
            .bind(parts)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Claim a pending row for sending; false if it is no longer pending.
    pub async fn claim_outbox(&self, id: i64) -> Result<bool> {
        let r = sqlx::query(crate::sql::outbox::CLAIM.pg)
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
            crate::sql::outbox::RESET_SENDING.pg
        };
        let r = sqlx::query(sql).execute(&self.pool).await?;
        Ok(r.rows_affected())
    }

    pub async fn mark_outbox_sent(&self, id: i64) -> Result<()> {
        sqlx::query(crate::sql::outbox::SENT.pg)
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
                sqlx::query(crate::sql::outbox::RETRY.pg)
                    .bind(error)
                    .bind(at)
                    .bind(id)
                    .execute(&self.pool)
                    .await?
            }
            None => {
                sqlx::query(crate::sql::outbox::FAIL.pg)
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
        Ok(sqlx::query_as(crate::sql::outbox::COUNTS.pg)
            .fetch_all(&self.pool)
            .await?)
    }

    /// An outbox row's state and attempts by key.
    pub async fn outbox_state(&self, key: &str) -> Result<Option<(String, i64)>> {
        Ok(sqlx::query_as(crate::sql::outbox::STATE_OF.pg)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Make pending messages for one chat due now. Returns how many rows moved forward.
    pub async fn retry_chat_now(&self, channel: &str, chat_id: &str) -> Result<u64> {
        let r = sqlx::query(crate::sql::outbox::RETRY_CHAT_NOW.pg)
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
        Ok(sqlx::query_as(crate::sql::outbox::CHAT_OF.pg)
            .bind(key)
            .fetch_one(&self.pool)
            .await?)
    }
}
