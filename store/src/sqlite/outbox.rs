//! The outbox: every message bound for a channel, at most once per idempotency key,
//! with its footer (the announce's `Stats:` line) and its buttons apart from its text, delivery state,
//! attempts, the time of the next attempt and how many parts of it were delivered. A chat's rows leave in order: none is due while an earlier row of the
//! same chat (channel, chat, thread) is pending or being sent.

use sqlx::Row;
use switchboard_channels::{Action, Origin};

use super::super::outbox::decode_outbox;
use super::{now_ms, to_json, Result, Sqlite};
pub(super) use crate::outbox::*;

pub(super) struct NewOutbox<'a> {
    pub key: &'a str,
    pub origin: &'a Origin,
    pub text: &'a str,
    pub actions: &'a [Action],
}

/// Insert unless the key exists already (idempotent). Returns whether a row was added.
pub(super) async fn insert_outbox<'e, E>(ex: E, m: &NewOutbox<'_>) -> Result<bool>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    let now = now_ms();
    let r = sqlx::query(crate::sql::outbox::INSERT_WITH_ACTIONS.sqlite)
        .bind(m.key)
        .bind(&m.origin.channel)
        .bind(&m.origin.chat_id)
        .bind(&m.origin.thread_id)
        .bind(to_json(m.origin)?)
        .bind(m.text)
        .bind(if m.actions.is_empty() {
            None
        } else {
            Some(to_json(&m.actions)?)
        })
        .bind(now)
        .execute(ex)
        .await?;
    Ok(r.rows_affected() == 1)
}

impl Sqlite {
    /// Queue a message for delivery. A second call with the same key is a no-op.
    pub async fn enqueue_outbox(&self, key: &str, origin: &Origin, text: &str) -> Result<bool> {
        self.enqueue_outbox_with_actions(key, origin, text, &[])
            .await
    }

    /// [`Self::enqueue_outbox`] with buttons under the message.
    pub async fn enqueue_outbox_with_actions(
        &self,
        key: &str,
        origin: &Origin,
        text: &str,
        actions: &[Action],
    ) -> Result<bool> {
        let m = NewOutbox {
            key,
            origin,
            text,
            actions,
        };
        insert_outbox(&mut *self.writer().await, &m).await
    }

    /// [`Self::enqueue_outbox`] with a file.
    pub async fn enqueue_outbox_with_file(
        &self,
        key: &str,
        origin: &Origin,
        text: &str,
        file: &switchboard_channels::OutboundFile,
    ) -> Result<bool> {
        let now = now_ms();
        let r = sqlx::query(crate::sql::outbox::INSERT_WITH_FILE.sqlite)
            .bind(key)
            .bind(&origin.channel)
            .bind(&origin.chat_id)
            .bind(&origin.thread_id)
            .bind(to_json(origin)?)
            .bind(text)
            .bind(to_json(file)?)
            .bind(now)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Pending messages whose next attempt is due, oldest first, without any row that an
    /// earlier row of its chat holds back (one being sent, or pending and not yet due). A
    /// chat's due rows come in order; the caller sends them in that order.
    pub async fn due_outbox(&self, limit: i64) -> Result<Vec<OutboxRow>> {
        let rows = sqlx::query(crate::sql::outbox::DUE.sqlite)
            .bind(now_ms())
            .bind(limit)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_outbox).collect()
    }

    /// When the earliest pending message that heads its chat is due (unix ms), if any. (A
    /// row behind an earlier one of its chat waits for that one, not for its own time.)
    pub async fn next_outbox_due(&self) -> Result<Option<i64>> {
        let r = sqlx::query(crate::sql::outbox::NEXT_DUE.sqlite)
            .fetch_one(&mut *self.reader().await)
            .await?;
        Ok(r.try_get("t")?)
    }

    /// Record that the first `parts` parts of a message being sent were delivered, so a
    /// later attempt (after a failure or a crash) resumes after them.
    pub async fn mark_outbox_progress(&self, id: i64, parts: i64) -> Result<()> {
        sqlx::query(crate::sql::outbox::PARTS_SENT.sqlite)
            .bind(parts)
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Claim a pending row for sending (state `sending`). Returns false if another worker
    /// claimed it or it is no longer pending, so a stale read never sends a row twice.
    pub async fn claim_outbox(&self, id: i64) -> Result<bool> {
        let r = sqlx::query(crate::sql::outbox::CLAIM.sqlite)
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// At start: rows that were being sent when the process died go back to pending. (The
    /// channel may or may not have received them; this is the one at-least-once window.)
    pub async fn reset_sending_outbox(&self) -> Result<u64> {
        let r = sqlx::query(crate::sql::outbox::RESET_SENDING.sqlite)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected())
    }

    pub async fn mark_outbox_sent(&self, id: i64) -> Result<()> {
        sqlx::query(crate::sql::outbox::SENT.sqlite)
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
                sqlx::query(crate::sql::outbox::RETRY.sqlite)
                    .bind(error)
                    .bind(at)
                    .bind(id)
                    .execute(&mut *self.writer().await)
                    .await?
            }
            None => {
                sqlx::query(crate::sql::outbox::FAIL.sqlite)
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
        let rows = sqlx::query(crate::sql::outbox::COUNTS.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("state")?, r.try_get("n")?)))
            .collect()
    }

    /// Look up an outbox row's state and attempts by key (tests and diagnostics).
    pub async fn outbox_state(&self, key: &str) -> Result<Option<(String, i64)>> {
        let r = sqlx::query(crate::sql::outbox::STATE_OF.sqlite)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.map(|r| Ok((r.try_get("state")?, r.try_get("attempts")?)))
            .transpose()
    }
}

impl Sqlite {
    /// Make pending messages for one chat due now (its recipient just came back, e.g. a
    /// browser reconnected). Returns how many rows were moved forward.
    pub async fn retry_chat_now(&self, channel: &str, chat_id: &str) -> Result<u64> {
        let r = sqlx::query(crate::sql::outbox::RETRY_CHAT_NOW.sqlite)
            .bind(now_ms())
            .bind(channel)
            .bind(chat_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected())
    }
}

impl Sqlite {
    #[cfg(test)]
    pub(crate) async fn outbox_chat_for_tests(
        &self,
        key: &str,
    ) -> Result<(String, String, Option<String>, String, Option<String>)> {
        Ok(sqlx::query_as(crate::sql::outbox::CHAT_OF.sqlite)
            .bind(key)
            .fetch_one(&mut *self.reader().await)
            .await?)
    }
}
