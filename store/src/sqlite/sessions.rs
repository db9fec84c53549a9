//! Sessions: one active row per session key; `/new` and archiving retire a row.

use std::sync::Arc;

use hashlink::LruCache;
use parking_lot::{Mutex, MutexGuard};
use sqlx::Row;
use switchboard_channels::Origin;
use uuid::Uuid;

use super::super::sessions::decode_session;
use super::writer::{script, Args, Params, Script};
use super::{now_ms, to_json, Result, Sqlite, StoreError};
use crate::choices::SessionChoices;
pub(super) use crate::sessions::*;

/// The active session of a key: inserted if there is none, else its origin updated if a
/// different one is given (`changes()`: only if nothing was inserted), then read.
/// Twin of `Pg::ensure_session` (data-modifying CTEs, which SQLite has not).
static ENSURE: Script = script!(
    "INSERT INTO sessions (id, key, agent_id, origin, status, created_at, updated_at)
         SELECT ?, ?, ?, ?, 'active', ?, ?
         WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE key = ? AND status = 'active');
     UPDATE sessions SET origin = ?, updated_at = ?
         WHERE changes() = 0 AND key = ? AND status = 'active' AND ? AND origin IS NOT ?;
     SELECT 'session' AS part, * FROM sessions WHERE key = ? AND status = 'active';"
);

/// The parameters of [`ENSURE`].
pub(super) struct Ensure<'a> {
    /// The id of the session, if it is created.
    pub(super) id: &'a str,
    pub(super) key: &'a str,
    pub(super) agent_id: &'a str,
    /// Its last-known origin, if the caller has one.
    pub(super) origin: Option<&'a Origin>,
    pub(super) now: i64,
}

impl Params for Ensure<'_> {
    fn script(&self) -> &'static Script {
        &ENSURE
    }

    fn args(&self) -> Result<Args> {
        let Ensure {
            id,
            key,
            agent_id,
            origin,
            now,
        } = *self;
        let origin_json = origin.map(to_json).transpose()?;
        Ok(Args::default()
            // INSERT
            .bind(id)
            .bind(key)
            .bind(agent_id)
            .bind(origin_json.clone())
            .bind(now)
            .bind(now)
            .bind(key)
            // UPDATE
            .bind(origin_json.clone())
            .bind(now)
            .bind(key)
            .bind(origin.is_some())
            .bind(origin_json)
            // SELECT
            .bind(key))
    }
}

impl Sqlite {
    /// The active session for `key`, created if there is none. `origin`, when given and
    /// different from the stored one, becomes the session's last-known origin.
    ///
    /// Active sessions are cached: a hit with the same origin costs no database round trip.
    /// A miss is one script through the group-commit writer. Every archive drops the key
    /// from the cache before its own transaction commits, and a row read before such a drop
    /// is not cached (see [`SessionCache::put_unless_forgotten`]), so a stale (archived)
    /// row is never served.
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
        let ensure = Ensure {
            id: &Uuid::new_v4().to_string(),
            key,
            agent_id,
            origin,
            now: now_ms(),
        };
        let forgotten = self.sessions.forgotten();
        let added = self.uncompacted.added();
        let rows = self.conns.write(&ensure).await?;
        let row = rows
            .first()
            .map(decode_session)
            .transpose()?
            .ok_or_else(|| {
                StoreError::Corrupt(format!("no active session {key} after ensuring one"))
            })?;
        if row.id == ensure.id {
            // Made just now: no `/model` or `/think` choice and no compaction yet, so its
            // first run's start reads neither (each kept unless raced, as when read).
            self.sessions
                .put_choices_unless_forgotten(key, SessionChoices::default(), forgotten);
            self.uncompacted.put_unless_added(&row.id, added);
        }
        self.sessions.put_unless_forgotten(row.clone(), forgotten);
        Ok(row)
    }

    /// The active session for `key`, if any.
    pub async fn active_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(crate::sql::sessions::ACTIVE.sqlite)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// A session by its id (active or archived).
    pub async fn session_by_id(&self, id: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(crate::sql::sessions::BY_ID.sqlite)
            .bind(id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// The newest session row for `key`, active or archived.
    pub async fn latest_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let r = sqlx::query(crate::sql::sessions::LATEST.sqlite)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// Archive the active session of `key` (its transcript stays readable). Returns
    /// the archived row, if there was one.
    pub async fn archive_session(&self, key: &str) -> Result<Option<SessionRow>> {
        let now = now_ms();
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        let r = sqlx::query(crate::sql::sessions::ARCHIVE.sqlite)
            .bind(now)
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
        if r.is_some() {
            // A sub-agent's progress line is edited only while it lives.
            sqlx::query(crate::sql::progress::DROP.sqlite)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        // Before the commit: see `ensure_session`.
        self.sessions.forget(key);
        if let Some(r) = &r {
            self.transcripts.forget(&r.try_get::<String, _>("id")?);
        }
        tx.commit().await?;
        r.as_ref().map(decode_session).transpose()
    }

    /// Sessions, newest activity first. Activity is the later of the row's own update and
    /// its newest transcript message (a message does not touch the session row).
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
        let rows = sqlx::query(sql.sqlite)
            .bind(limit)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_session).collect()
    }
}

/// Active sessions by key (see [`Sqlite::ensure_session`]). Bounded: when full, the
/// session used least recently makes room (a miss goes back to the database).
#[derive(Clone)]
pub(super) struct SessionCache(Arc<Mutex<Cached>>);

pub(super) struct Cached {
    rows: LruCache<String, SessionRow>,
    /// The choices (`/model`, `/think`) of keys' active sessions, as read: every run's
    /// start reads them. (A key without an active session has the defaults, and so has
    /// the session it gets next.)
    choices: LruCache<String, SessionChoices>,
    /// Keys dropped so far (see [`SessionCache::put_unless_forgotten`]).
    forgotten: u64,
}

impl Default for SessionCache {
    fn default() -> Self {
        SessionCache(Arc::new(Mutex::new(Cached {
            rows: LruCache::new(CACHE_MAX),
            choices: LruCache::new(CACHE_MAX),
            forgotten: 0,
        })))
    }
}

/// Most cached sessions.
const CACHE_MAX: usize = 10_000;

impl SessionCache {
    fn lock(&self) -> MutexGuard<'_, Cached> {
        self.0.lock()
    }

    fn get(&self, key: &str) -> Option<SessionRow> {
        self.lock().rows.get(key).cloned()
    }

    /// The cached choices of `key`'s active session, if they were read.
    pub(super) fn choices(&self, key: &str) -> Option<SessionChoices> {
        self.lock().choices.get(key).cloned()
    }

    /// Cache the choices of `key`'s active session, read (committed) after `forgotten` was
    /// taken, unless some key was dropped since: a change of them, or the session's
    /// archive, may have committed after they were read.
    pub(super) fn put_choices_unless_forgotten(
        &self,
        key: &str,
        choices: SessionChoices,
        forgotten: u64,
    ) {
        let mut c = self.lock();
        if c.forgotten == forgotten {
            c.choices.insert(key.to_owned(), choices);
        }
    }

    /// How many keys were dropped so far; pass it to [`Self::put_unless_forgotten`].
    pub(super) fn forgotten(&self) -> u64 {
        self.lock().forgotten
    }

    /// Cache `row`, read (committed) after `forgotten` was taken, unless some key was
    /// dropped since: that drop may have been this row's archive, committed after the row
    /// was read. (Rare, and a miss only costs a round trip.)
    pub(super) fn put_unless_forgotten(&self, row: SessionRow, forgotten: u64) {
        let mut c = self.lock();
        if c.forgotten == forgotten {
            c.insert(row);
        }
    }

    /// Drop `key`; called before any change to its active row is committed.
    pub(super) fn forget(&self, key: &str) {
        let mut c = self.lock();
        c.rows.remove(key);
        c.choices.remove(key);
        c.forgotten += 1;
    }

    /// Drop the cached choices of `key`; called after a change of them is committed. (The
    /// choices are read on a reader, beside the writer: a read that took `forgotten`
    /// before this call may have seen the old ones, and is not cached.)
    pub(super) fn forget_choices(&self, key: &str) {
        let mut c = self.lock();
        c.choices.remove(key);
        c.forgotten += 1;
    }
}

impl Cached {
    /// Cache `row`; past [`CACHE_MAX`] the least recently used row goes.
    fn insert(&mut self, row: SessionRow) {
        self.rows.insert(row.key.clone(), row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str) -> SessionRow {
        SessionRow {
            id: format!("id-{key}"),
            key: key.into(),
            agent_id: "main".into(),
            origin: None,
            status: SessionStatus::Active,
            created_at: 0,
            updated_at: 0,
            archived_at: None,
        }
    }

    /// Catches: a full cache cleared at once (every active session, the busy ones too,
    /// read from the database again) instead of the least recently used one making room.
    #[test]
    fn a_full_cache_drops_the_least_recently_used_session_only() {
        let cache = SessionCache::default();
        let forgotten = cache.forgotten();
        for i in 0..CACHE_MAX {
            cache.put_unless_forgotten(row(&format!("k{i}")), forgotten);
        }
        assert!(
            cache.get("k0").is_some(),
            "k0 is used again: k1 is now the oldest"
        );
        cache.put_unless_forgotten(row("new"), forgotten);
        assert_eq!(cache.get("k1"), None);
        for key in ["k0", "k2", "new"] {
            assert_eq!(cache.get(key), Some(row(key)), "{key}");
        }
        assert_eq!(cache.lock().rows.len(), CACHE_MAX);
    }

    /// Catches: a run started with choices from before a `/model` (a read that raced the
    /// change cached), or a fresh session (after `/new`) given the archived one's.
    #[test]
    fn cached_choices_are_dropped_with_their_session_and_never_from_a_raced_read() {
        let cache = SessionCache::default();
        let pick = |m: &str| SessionChoices {
            model: Some(m.into()),
            thinking: None,
        };
        let before = cache.forgotten();
        cache.forget_choices("k");
        cache.put_choices_unless_forgotten("k", pick("old"), before);
        assert_eq!(cache.choices("k"), None, "read before the change committed");
        cache.put_choices_unless_forgotten("k", pick("new"), cache.forgotten());
        assert_eq!(cache.choices("k"), Some(pick("new")));
        cache.put_unless_forgotten(row("k"), cache.forgotten());
        assert_eq!(cache.choices("k"), Some(pick("new")), "the session cached");
        cache.forget("k");
        assert_eq!(cache.choices("k"), None, "the session archived");
    }
}
