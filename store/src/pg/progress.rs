//! Progress lines on PostgreSQL: where a sub-agent's progress message was posted.

use super::super::progress::decode_progress;
use super::super::{now_ms, ProgressLine, Result};
use super::Pg;

impl Pg {
    /// The line of a child, if one was posted.
    pub async fn progress_line(&self, child_session_key: &str) -> Result<Option<ProgressLine>> {
        let r = sqlx::query("SELECT * FROM progress_lines WHERE child_session_key = $1")
            .bind(child_session_key)
            .fetch_optional(&self.pool)
            .await?;
        let Some(r) = r else {
            return Ok(None);
        };
        decode_progress(&r).map(Some)
    }

    /// Record a child's line as posted or edited, only while its session is active (an
    /// archive deletes the line; a late edit does not bring it back).
    pub async fn save_progress_line(&self, line: &ProgressLine) -> Result<()> {
        sqlx::query(
            "INSERT INTO progress_lines (child_session_key, channel, chat_id, thread_id,
                 message_id, text, updated_at)
             SELECT $1, $2, $3, $4, $5, $6, $7
             WHERE EXISTS (SELECT 1 FROM sessions WHERE key = $1 AND status = 'active')
             ON CONFLICT (child_session_key) DO UPDATE SET channel = excluded.channel,
                 chat_id = excluded.chat_id, thread_id = excluded.thread_id,
                 message_id = excluded.message_id, text = excluded.text,
                 updated_at = excluded.updated_at",
        )
        .bind(&line.child_session_key)
        .bind(&line.channel)
        .bind(&line.chat_id)
        .bind(&line.thread_id)
        .bind(&line.message_id)
        .bind(&line.text)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The children whose run has ended and whose line is still stored.
    pub async fn ended_children_with_lines(&self) -> Result<Vec<String>> {
        let keys = sqlx::query_scalar(
            "SELECT p.child_session_key FROM progress_lines p
             WHERE EXISTS (SELECT 1 FROM subagent_runs s
                 WHERE s.child_session_key = p.child_session_key AND s.outcome IS NOT NULL)
             ORDER BY p.child_session_key",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(keys)
    }
}
