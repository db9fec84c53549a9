//! Sessions on PostgreSQL: one active row per key (the partial unique index
//! `sessions_active_key`), `/new` and archiving retire a row. No session cache: with
//! several processes an archive by one would not reach another's cache.

use switchboard_channels::Origin;
use uuid::Uuid;

use super::super::sessions::decode_session;
use super::super::{now_ms, to_json, Result, SessionRow, StoreError};
use super::Pg;

/// The columns of `sessions` as [`decode_session`] reads them: `origin` is `JSONB` here and
/// read as text, the shape SQLite stores it in.
const SESSION_COLUMNS: &str =
    "id, key, agent_id, origin::text AS origin, status, created_at, updated_at, archived_at";

/// How often `ensure_session` tries again when its key's active row changed under it (an
/// archive or a create by another writer between its conflict check and its read).
const ENSURE_TRIES: usize = 3;

impl Pg {
    /// The active session for `key`, created if there is none; a different `origin`
    /// replaces the stored one. One statement: insert unless an active row exists, else
    /// update its origin if it differs, else read it.
    pub async fn ensure_session(
        &self,
        key: &str,
        agent_id: &str,
        origin: Option<&Origin>,
    ) -> Result<SessionRow> {
        let origin_json = origin.map(to_json).transpose()?;
        // Twin of SQLite's ENSURE script: data-modifying CTEs instead of `changes()`.
        let sql = format!(
            "WITH ins AS (
                 INSERT INTO sessions (id, key, agent_id, origin, status, created_at, updated_at)
                 VALUES ($1, $2, $3, $4::jsonb, 'active', $5, $5)
                 ON CONFLICT (key) WHERE status = 'active' DO NOTHING
                 RETURNING {SESSION_COLUMNS}),
             upd AS (
                 UPDATE sessions SET origin = $4::jsonb, updated_at = $5
                 WHERE key = $2 AND status = 'active' AND $4::jsonb IS NOT NULL
                     AND origin IS DISTINCT FROM $4::jsonb AND NOT EXISTS (SELECT 1 FROM ins)
                 RETURNING {SESSION_COLUMNS})
             SELECT * FROM ins
             UNION ALL SELECT * FROM upd
             UNION ALL SELECT {SESSION_COLUMNS} FROM sessions
                 WHERE key = $2 AND status = 'active'
                     AND NOT EXISTS (SELECT 1 FROM ins) AND NOT EXISTS (SELECT 1 FROM upd)"
        );
        for _ in 0..ENSURE_TRIES {
            let r = sqlx::query(&sql)
                .bind(Uuid::new_v4().to_string())
                .bind(key)
                .bind(agent_id)
                .bind(origin_json.as_deref())
                .bind(now_ms())
                .fetch_optional(&self.pool)
                .await?;
            if let Some(r) = r {
                return decode_session(&r);
            }
        }
        Err(StoreError::Corrupt(format!(
            "no active session {key} after ensuring one"
        )))
    }

    /// The active session for `key`, if any.
    pub async fn active_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(crate::sql::sessions::ACTIVE.pg)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// A session by its id (active or archived).
    pub async fn session_by_id(&self, id: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(crate::sql::sessions::BY_ID.pg)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// The newest session row for `key`, active or archived.
    pub async fn latest_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(crate::sql::sessions::LATEST.pg)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// Archive the active session of `key`, and drop its progress line, in one
    /// transaction. Returns the archived row, if there was one.
    pub async fn archive_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let r = sqlx::query(crate::sql::sessions::ARCHIVE.pg)
            .bind(now)
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
        if r.is_some() {
            // A sub-agent's progress line is edited only while it lives.
            sqlx::query(crate::sql::progress::DROP.pg)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// Sessions, newest activity first (the later of the row's update and its newest
    /// transcript message).
    pub async fn list_sessions(
        &self,
        include_archived: bool,
        limit: i64,
    ) -> Result<Vec<SessionRow>> {
        let sql = if include_archived {
            crate::sql::sessions::LIST_ALL
        } else {
            crate::sql::sessions::LIST_ACTIVE
        };
        let rows = sqlx::query(sql.pg)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_session).collect()
    }
}
