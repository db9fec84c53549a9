//! The outbox rows whose file copy is still needed (see `store::media_files`).

use sqlx::Row;

use super::{Pg, Result};

impl Pg {
    /// The `file` JSON of the outbox rows that still need their copy.
    pub async fn outbox_files_held(
        &self,
        keep_channel: &str,
        kept_since: i64,
    ) -> Result<Vec<String>> {
        let rows = sqlx::query(crate::sql::media_files::KEPT.pg)
            .bind(keep_channel)
            .bind(kept_since)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| r.try_get::<String, _>("file").map_err(Into::into))
            .collect()
    }

    /// The channel and `file` JSON of outbox row `key`, if it has a file.
    pub async fn outbox_file(&self, key: &str) -> Result<Option<(String, String)>> {
        let row = sqlx::query(crate::sql::media_files::OF_KEY.pg)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((r.try_get("channel")?, r.try_get("file")?)))
            .transpose()
    }
}
