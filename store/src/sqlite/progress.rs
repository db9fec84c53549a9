//! Progress lines (`progress_lines`, migration 0015): where a sub-agent's progress message
//! was posted, so every edit, also after a restart, goes to that one message.

use super::super::progress::decode_progress;
use super::{now_ms, Result, Sqlite};
pub(super) use crate::progress::*;

impl Sqlite {
    /// The line of a child, if one was posted.
    pub async fn progress_line(&self, child_session_key: &str) -> Result<Option<ProgressLine>> {
        let r = sqlx::query(crate::sql::progress::GET.sqlite)
            .bind(child_session_key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        let Some(r) = r else {
            return Ok(None);
        };
        decode_progress(&r).map(Some)
    }

    /// Record a child's line as posted (a new message replaces the one before) or edited;
    /// `updated_at` is set to now. Only while the child's session is active: archiving it
    /// deletes its line (`archive_session`), and a last edit that lands after that is not
    /// recorded again, so the table holds the lines of live children only.
    pub async fn save_progress_line(&self, line: &ProgressLine) -> Result<()> {
        sqlx::query(crate::sql::progress::PUT.sqlite)
            .bind(&line.child_session_key)
            .bind(&line.channel)
            .bind(&line.chat_id)
            .bind(&line.thread_id)
            .bind(&line.message_id)
            .bind(&line.text)
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// The children whose run has ended and whose line is still stored.
    pub async fn ended_children_with_lines(&self) -> Result<Vec<String>> {
        let keys = sqlx::query_scalar(crate::sql::progress::OF_ENDED.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        Ok(keys)
    }
}
