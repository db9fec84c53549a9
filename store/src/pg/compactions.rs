//! Compactions on PostgreSQL (`compactions`): one insert per compaction, read by the newest.

use super::super::compactions::{decode_compaction, CompactionRow, NewCompaction};
use super::super::{now_ms, Result};
use super::Pg;

impl Pg {
    /// Commit a compaction of `session_id` in one statement (a repeat is ignored).
    pub async fn add_compaction(&self, session_id: &str, c: &NewCompaction) -> Result<()> {
        sqlx::query(crate::sql::compactions::ADD.pg)
            .bind(session_id)
            .bind(c.through_seq)
            .bind(&c.summary)
            .bind(c.replaced)
            .bind(c.tokens_before)
            .bind(c.tokens_after)
            .bind(now_ms())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The compaction that reaches furthest, if any.
    pub async fn latest_compaction(&self, session_id: &str) -> Result<Option<CompactionRow>> {
        let r = sqlx::query(crate::sql::compactions::LATEST.pg)
            .bind(session_id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_compaction).transpose()
    }

    /// Every compaction of a session, oldest first.
    pub async fn compactions(&self, session_id: &str) -> Result<Vec<CompactionRow>> {
        let rows = sqlx::query(crate::sql::compactions::OF_SESSION.pg)
            .bind(session_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_compaction).collect()
    }
}
