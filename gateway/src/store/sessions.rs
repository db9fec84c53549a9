//! Sessions: one active row per session key; `/new` and archiving retire a row.

use sqlx::Row;
use switchboard_channels::Origin;
use uuid::Uuid;

use super::{from_json, now_ms, to_json, Result, Store};

#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub key: String,
    pub agent_id: String,
    pub origin: Option<Origin>,
    pub status: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived_at: Option<i64>,
}

fn row_to_session(r: &sqlx::sqlite::SqliteRow) -> Result<SessionRow> {
    let origin: Option<String> = r.try_get("origin")?;
    Ok(SessionRow {
        id: r.try_get("id")?,
        key: r.try_get("key")?,
        agent_id: r.try_get("agent_id")?,
        origin: origin.as_deref().map(from_json).transpose()?,
        status: r.try_get("status")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        archived_at: r.try_get("archived_at")?,
    })
}

impl Store {
    /// The active session for `key`, created if there is none. `origin`, when given,
    /// becomes the session's last-known origin.
    pub async fn ensure_session(
        &self,
        key: &str,
        agent_id: &str,
        origin: Option<&Origin>,
    ) -> Result<SessionRow> {
        let now = now_ms();
        let origin_json = origin.map(to_json).transpose()?;
        let mut tx = self.begin_write().await?;
        let existing = sqlx::query("SELECT * FROM sessions WHERE key = ? AND status = 'active'")
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
        let row = match existing {
            Some(r) => {
                let mut s = row_to_session(&r)?;
                if let Some(o) = &origin_json {
                    sqlx::query("UPDATE sessions SET origin = ?, updated_at = ? WHERE id = ?")
                        .bind(o)
                        .bind(now)
                        .bind(&s.id)
                        .execute(&mut *tx)
                        .await?;
                    s.origin = origin.cloned();
                    s.updated_at = now;
                }
                s
            }
            None => {
                let id = Uuid::new_v4().to_string();
                sqlx::query(
                    "INSERT INTO sessions (id, key, agent_id, origin, status, created_at, updated_at)
                     VALUES (?, ?, ?, ?, 'active', ?, ?)",
                )
                .bind(&id)
                .bind(key)
                .bind(agent_id)
                .bind(&origin_json)
                .bind(now)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                SessionRow {
                    id,
                    key: key.to_string(),
                    agent_id: agent_id.to_string(),
                    origin: origin.cloned(),
                    status: "active".into(),
                    created_at: now,
                    updated_at: now,
                    archived_at: None,
                }
            }
        };
        tx.commit().await?;
        Ok(row)
    }

    /// The active session for `key`, if any.
    pub async fn active_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query("SELECT * FROM sessions WHERE key = ? AND status = 'active'")
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// A session by its id (active or archived).
    pub async fn session_by_id(&self, id: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query("SELECT * FROM sessions WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// The newest session row for `key`, active or archived.
    pub async fn latest_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(
            "SELECT * FROM sessions WHERE key = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
        )
        .bind(key)
        .fetch_optional(&self.pool)
        .await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// Archive the active session of `key` (its transcript stays readable). Returns
    /// the archived row, if there was one.
    pub async fn archive_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let now = now_ms();
        let r = sqlx::query(
            "UPDATE sessions SET status = 'archived', archived_at = ?, updated_at = ?
             WHERE key = ? AND status = 'active' RETURNING *",
        )
        .bind(now)
        .bind(now)
        .bind(key)
        .fetch_optional(&self.writer)
        .await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// Sessions, newest activity first.
    pub async fn list_sessions(
        &self,
        include_archived: bool,
        limit: i64,
    ) -> Result<Vec<SessionRow>> {
        let sql = if include_archived {
            "SELECT * FROM sessions ORDER BY updated_at DESC LIMIT ?"
        } else {
            "SELECT * FROM sessions WHERE status = 'active' ORDER BY updated_at DESC LIMIT ?"
        };
        let rows = sqlx::query(sql).bind(limit).fetch_all(&self.pool).await?;
        rows.iter().map(row_to_session).collect()
    }
}
