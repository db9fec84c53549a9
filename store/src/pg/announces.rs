//! A child's announce on PostgreSQL: asking the child once, counting failed attempts, and
//! completing it in one transaction whose first statement, the registry's UPDATE from
//! `pending`, gates the rest (its row lock makes a second completion wait, then find the
//! announce no longer pending and write nothing).

use sqlx::Row;

use super::super::{now_ms, AnnounceMessage, AnnounceState, NewMessage, Result};
use super::messages::insert_message;
use super::Pg;

impl Pg {
    /// Store the announce prompt `text` in the child's transcript (session `session_id`),
    /// unless it was stored for this announce before.
    pub async fn ask_for_announce(&self, run_id: &str, session_id: &str, text: &str) -> Result<()> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        // Twin of SQLite's ANNOUNCE_PROMPT script: the UPDATE's row count gates the insert.
        let first = sqlx::query(
            "UPDATE subagent_runs SET announce_prompt_at = $1
             WHERE run_id = $2 AND announce_prompt_at IS NULL",
        )
        .bind(now)
        .bind(run_id)
        .execute(&mut *tx)
        .await?;
        if first.rows_affected() == 1 {
            sqlx::query(
                "INSERT INTO messages (session_id, run_id, role, content, created_at)
                 VALUES ($1, NULL, 'user', $2, $3)",
            )
            .bind(session_id)
            .bind(text)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn bump_announce_attempts(&self, run_id: &str) -> Result<i64> {
        let r = sqlx::query(crate::sql::announces::BUMP_ATTEMPTS.pg)
            .bind(run_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(r.try_get("announce_attempts")?)
    }

    /// Finish the announce (see [`Pg::complete_announce_fan_in`]) without a fan-in.
    pub async fn complete_announce(
        &self,
        run_id: &str,
        message: Option<AnnounceMessage<'_>>,
        archive_now: bool,
        step_answer: Option<(&str, &NewMessage)>,
    ) -> Result<bool> {
        self.complete_announce_fan_in(run_id, message, archive_now, step_answer, None)
            .await
    }

    /// Finish a `pending` announce in one transaction: queue `message` in the outbox (key
    /// `announce:<runId>`, to the requester's chat columns) or record a skip (`None`), arm
    /// an immediate archive with `archive_now`, store the child's `step_answer` and append
    /// `fan_in` to the requester's active session. False (nothing written) when the
    /// announce was not pending.
    pub async fn complete_announce_fan_in(
        &self,
        run_id: &str,
        message: Option<AnnounceMessage<'_>>,
        archive_now: bool,
        step_answer: Option<(&str, &NewMessage)>,
        fan_in: Option<&str>,
    ) -> Result<bool> {
        let now = now_ms();
        let state = if message.is_some() {
            AnnounceState::Queued
        } else {
            AnnounceState::Skipped
        };
        let mut tx = self.pool.begin().await?;
        // Twin of SQLite's COMPLETE_ANNOUNCE script: the UPDATE's row gates the rest.
        let moved = sqlx::query(
            "UPDATE subagent_runs SET announce_state = $1,
                 archive_at = CASE WHEN $2 THEN $3 ELSE archive_at END
             WHERE run_id = $4 AND announce_state = 'pending'
             RETURNING child_session_key, requester_session_key",
        )
        .bind(state.as_str())
        .bind(archive_now)
        .bind(now)
        .bind(run_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(moved) = moved else {
            return Ok(false);
        };
        if let Some(text) = fan_in {
            sqlx::query(
                "INSERT INTO messages (session_id, run_id, role, content, created_at)
                 SELECT id, NULL, 'user', $1, $2 FROM sessions WHERE key = $3 AND status = 'active'",
            )
            .bind(text)
            .bind(now)
            .bind(moved.try_get::<String, _>("requester_session_key")?)
            .execute(&mut *tx)
            .await?;
        }
        if let Some((session_id, m)) = step_answer {
            insert_message(&mut *tx, session_id, None, m).await?;
        }
        if let Some(message) = message {
            sqlx::query(
                "INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, footer,
                     next_attempt_at, created_at)
                 SELECT $1, requester_channel, requester_chat_id, requester_thread_id,
                     requester_origin, $2, $3, $4, $4
                 FROM subagent_runs WHERE run_id = $5 AND requester_origin IS NOT NULL
                 ON CONFLICT (key) DO NOTHING",
            )
            .bind(format!("announce:{run_id}"))
            .bind(message.text)
            .bind(message.footer)
            .bind(now)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        }
        if archive_now {
            sqlx::query(
                "INSERT INTO timers (kind, target, due_at) VALUES ('archive', $1, $2)
                 ON CONFLICT (kind, target) DO UPDATE SET due_at = excluded.due_at",
            )
            .bind(moved.try_get::<String, _>("child_session_key")?)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Mark an announce failed for good (kept for `/subagents info`).
    pub async fn fail_announce(&self, run_id: &str) -> Result<()> {
        sqlx::query(crate::sql::announces::FAIL.pg)
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
