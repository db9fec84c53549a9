//! Progress lines on PostgreSQL: where a sub-agent's progress message was posted.

use super::super::progress::decode_progress;
use super::super::{now_ms, ProgressLine, Result};
use super::Pg;

impl Pg {
    /// The line of a child, if one was posted.
    pub async fn progress_line(&self, child_session_key: &str) -> Result<Option<ProgressLine>> {
        let r = sqlx::query(crate::sql::progress::GET.pg)
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
        sqlx::query(crate::sql::progress::PUT.pg)
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
        let keys = sqlx::query_scalar(crate::sql::progress::OF_ENDED.pg)
            .fetch_all(&self.pool)
            .await?;
        Ok(keys)
    }
}
