//! Compactions on SQLite (`compactions`): one insert per compaction, read by the newest.

use super::super::compactions::decode_compaction;
use super::{now_ms, Result, Sqlite};
pub(super) use crate::compactions::*;

impl Sqlite {
    /// Commit a compaction of `session_id` in one statement (a repeat is ignored).
    pub async fn add_compaction(&self, session_id: &str, c: &NewCompaction) -> Result<()> {
        sqlx::query(
            "INSERT INTO compactions (session_id, through_seq, summary, replaced, tokens_before,
             tokens_after, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT(session_id, through_seq) DO NOTHING",
        )
        .bind(session_id)
        .bind(c.through_seq)
        .bind(&c.summary)
        .bind(c.replaced)
        .bind(c.tokens_before)
        .bind(c.tokens_after)
        .bind(now_ms())
        .execute(&mut *self.writer().await)
        .await?;
        Ok(())
    }

    /// The compaction that reaches furthest, if any.
    pub async fn latest_compaction(&self, session_id: &str) -> Result<Option<CompactionRow>> {
        let r = sqlx::query(
            "SELECT * FROM compactions WHERE session_id = ? ORDER BY through_seq DESC LIMIT 1",
        )
        .bind(session_id)
        .fetch_optional(&mut *self.reader().await)
        .await?;
        r.as_ref().map(decode_compaction).transpose()
    }

    /// Every compaction of a session, oldest first.
    pub async fn compactions(&self, session_id: &str) -> Result<Vec<CompactionRow>> {
        let rows =
            sqlx::query("SELECT * FROM compactions WHERE session_id = ? ORDER BY through_seq")
                .bind(session_id)
                .fetch_all(&mut *self.reader().await)
                .await?;
        rows.iter().map(decode_compaction).collect()
    }
}
