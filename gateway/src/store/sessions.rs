//! Sessions: one active row per session key; `/new` and archiving retire a row.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

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
    /// The active session for `key`, created if there is none. `origin`, when given and
    /// different from the stored one, becomes the session's last-known origin.
    ///
    /// Active sessions are cached: a hit with the same origin costs no database round trip.
    /// The cache is filled while the write transaction still holds the writer, and every
    /// archive drops the key before its own transaction commits, so a stale (archived) row
    /// is never served.
    pub async fn ensure_session(
        &self,
        key: &str,
        agent_id: &str,
        origin: Option<&Origin>,
    ) -> Result<SessionRow> {
        if let Some(hit) = self.sessions.get(key) {
            if origin.is_none_or(|o| hit.origin.as_ref() == Some(o)) {
                return Ok(hit);
            }
        }
        let now = now_ms();
        let origin_json = origin.map(to_json).transpose()?;
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        let existing = sqlx::query("SELECT * FROM sessions WHERE key = ? AND status = 'active'")
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
        let row = match existing {
            Some(r) => {
                let mut s = row_to_session(&r)?;
                if let Some(o) = origin_json.as_ref().filter(|_| s.origin.as_ref() != origin) {
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
        self.sessions.put(row.clone());
        if let Err(e) = tx.commit().await {
            self.sessions.forget(key);
            return Err(e.into());
        }
        Ok(row)
    }

    /// The active session for `key`, if any.
    pub async fn active_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query("SELECT * FROM sessions WHERE key = ? AND status = 'active'")
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// A session by its id (active or archived).
    pub async fn session_by_id(&self, id: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query("SELECT * FROM sessions WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// The newest session row for `key`, active or archived.
    pub async fn latest_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(
            "SELECT * FROM sessions WHERE key = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
        )
        .bind(key)
        .fetch_optional(&mut *self.reader().await)
        .await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// Archive the active session of `key` (its transcript stays readable). Returns
    /// the archived row, if there was one.
    pub async fn archive_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let now = now_ms();
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        let r = sqlx::query(
            "UPDATE sessions SET status = 'archived', archived_at = ?, updated_at = ?
             WHERE key = ? AND status = 'active' RETURNING *",
        )
        .bind(now)
        .bind(now)
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?;
        // While the writer is held: no `ensure_session` can cache the row again before commit.
        self.sessions.forget(key);
        tx.commit().await?;
        r.as_ref().map(row_to_session).transpose()
    }

    /// Sessions, newest activity first. Activity is the later of the row's own update and
    /// its newest transcript message (a message does not touch the session row).
    pub async fn list_sessions(
        &self,
        include_archived: bool,
        limit: i64,
    ) -> Result<Vec<SessionRow>> {
        let sql = format!(
            "SELECT s.id, s.key, s.agent_id, s.origin, s.status, s.created_at, s.archived_at,
                 MAX(s.updated_at, COALESCE((SELECT m.created_at FROM messages m WHERE m.session_id = s.id
                                             ORDER BY m.seq DESC LIMIT 1), 0)) AS updated_at
             FROM sessions s {} ORDER BY updated_at DESC LIMIT ?",
            if include_archived {
                ""
            } else {
                "WHERE s.status = 'active'"
            }
        );
        let rows = sqlx::query(&sql)
            .bind(limit)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(row_to_session).collect()
    }
}

/// Active sessions by key (see [`Store::ensure_session`]). Bounded: when full it is
/// cleared, and misses go back to the database.
#[derive(Clone, Default)]
pub(super) struct SessionCache(Arc<Mutex<HashMap<String, SessionRow>>>);

/// Most cached sessions.
const CACHE_MAX: usize = 10_000;

impl SessionCache {
    fn map(&self) -> MutexGuard<'_, HashMap<String, SessionRow>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, key: &str) -> Option<SessionRow> {
        self.map().get(key).cloned()
    }

    pub(super) fn put(&self, row: SessionRow) {
        let mut map = self.map();
        if map.len() >= CACHE_MAX {
            map.clear();
        }
        map.insert(row.key.clone(), row);
    }

    /// Drop `key`; called before any change to its active row is committed.
    pub(super) fn forget(&self, key: &str) {
        self.map().remove(key);
    }
}
