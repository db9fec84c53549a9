//! The store on SQLite: one writer connection (with the group-commit writer for a turn's
//! scripts), a few readers, and the caches of active sessions and started transcripts.
//!
//! Every method here has its same-named twin on the PostgreSQL engine; `Store` picks one
//! (see `store::api`).

mod announces;
mod approvals;
mod channels;
mod choices;
mod compactions;
mod conns;
mod cron;
mod inbox;
mod interrupts;
mod leases;
mod ledger;
mod media_files;
mod messages;
mod outbox;
mod progress;
mod row;
mod runs;
mod sessions;
mod starts;
mod subagents;
mod transcripts;
mod usage;
mod worktrees;
mod writer;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};

use conns::Conns;

// What the engine's modules take from the store's shared part.
use super::{health, now_ms, private_dir, states, to_json, Result, StoreError};

/// How long a write waits for another process's write lock (none is expected: one daemon
/// per state folder).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Embedded migrations, applied at start.
pub(super) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

/// The SQLite engine. Cheap to clone.
///
/// Every write goes through the one writer connection, reads through a few reader
/// connections (see `conns`).
#[derive(Clone)]
pub(super) struct Sqlite {
    conns: Arc<Conns>,
    sessions: sessions::SessionCache,
    transcripts: transcripts::TranscriptCache,
    uncompacted: compactions::Uncompacted,
    leases: leases::Holders,
}

impl Sqlite {
    /// Open (creating if missing) the database at `url`, switch to WAL and migrate.
    pub(super) async fn open(url: &str) -> Result<Sqlite> {
        let opts = SqliteConnectOptions::from_str(url)?;
        let file = health::sqlite_file(url);
        if let Some(dir) = file.as_deref().and_then(std::path::Path::parent) {
            if !dir.as_os_str().is_empty() {
                private_dir(dir).map_err(|source| StoreError::Folder {
                    path: dir.to_owned(),
                    source,
                })?;
            }
        }
        let created = file.as_deref().is_some_and(|f| !f.exists());
        let opts = opts
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            // Room for every lookup and direct write the store sends (a turn's scripts run
            // on the group-commit writer's own connection, see `writer`).
            .statement_cache_capacity(256)
            // A long answer (a transcript read whole, a list for the API) is sent by the
            // connection's thread as it steps; with sqlx's default of 50 rows it waits for
            // the reading task to take them, which under load sits in the runtime's queue.
            .row_buffer_size(4096)
            .foreign_keys(true);
        // A quiet daemon keeps no transcripts: after a busy spell their rows are spread
        // over the allocator's pages among freed ones and hold them all (docs/performance.md,
        // "Memory after use"); the next start of each session reads its transcript whole.
        let transcripts = transcripts::TranscriptCache::default();
        let on_quiet = {
            let transcripts = transcripts.clone();
            Box::new(move || transcripts.clear())
        };
        let conns = Conns::open(&opts, Some(on_quiet), migrate).await?;
        if let (true, Some(file)) = (created, &file) {
            make_private(file);
        }
        Ok(Sqlite {
            conns,
            sessions: Default::default(),
            transcripts,
            uncompacted: Default::default(),
            leases: Default::default(),
        })
    }

    /// An in-memory database (tests). One connection, both the reader and the writer:
    /// every connection to `:memory:` is a database of its own.
    pub(super) async fn open_in_memory() -> Result<Sqlite> {
        let opts = SqliteConnectOptions::from_str("sqlite::memory:")?.foreign_keys(true);
        let conns = Conns::open(&opts, None, migrate).await?;
        Ok(Sqlite {
            conns,
            sessions: Default::default(),
            transcripts: Default::default(),
            uncompacted: Default::default(),
            leases: Default::default(),
        })
    }

    /// The writer connection (held until the guard drops).
    pub(super) async fn writer(&self) -> tokio::sync::MutexGuard<'_, sqlx::SqliteConnection> {
        self.conns.writer().await
    }

    /// A reader connection (held until the guard drops).
    pub(super) async fn reader(&self) -> tokio::sync::MutexGuard<'_, sqlx::SqliteConnection> {
        self.conns.reader().await
    }

    pub(super) async fn close(&self) {
        self.conns.close().await;
    }

    /// Run one SQL statement on the writer: tests use it to make the store fail on purpose
    /// (e.g. a trigger that aborts inserts).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(super) async fn execute_for_tests(&self, sql: &str) -> Result<()> {
        sqlx::query(sql).execute(&mut *self.writer().await).await?;
        Ok(())
    }

    /// The round trips asked for so far: reads, writes (tests).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(super) fn round_trips_for_tests(&self) -> (u64, u64) {
        self.conns.round_trips()
    }

    /// The `i64` one SQL query answers (tests).
    #[cfg(test)]
    pub(super) async fn count_for_tests(&self, sql: &str) -> Result<i64> {
        Ok(sqlx::query_scalar(sql)
            .fetch_one(&mut *self.reader().await)
            .await?)
    }
}

/// A database file this process just created, and its WAL files, made readable by the
/// owner only (SQLite creates them as the umask allows, usually 0644).
fn make_private(file: &std::path::Path) {
    #[cfg(unix)]
    for suffix in ["", "-wal", "-shm"] {
        use std::os::unix::fs::PermissionsExt;
        let mut path = file.as_os_str().to_owned();
        path.push(suffix);
        if let Err(e) = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(file = %std::path::Path::new(&path).display(), error = %e, "cannot make the database file private");
            }
        }
    }
}

/// Apply the embedded migrations (on the writer, before any reader opens).
pub(crate) async fn migrate(w: &mut sqlx::SqliteConnection) -> Result<()> {
    MIGRATOR.run(w).await?;
    Ok(())
}

/// Begin a write transaction on the writer connection `w`. `BEGIN IMMEDIATE` takes the
/// write lock up front, so a transaction that reads before it writes never fails with
/// SQLITE_BUSY on the lock upgrade (the busy timeout only covers waiting for the lock, not
/// upgrading it). Dropped without `commit`, it rolls back.
async fn begin_write(
    w: &mut sqlx::SqliteConnection,
) -> Result<sqlx::Transaction<'_, sqlx::Sqlite>> {
    Ok(sqlx::Connection::begin_with(w, "BEGIN IMMEDIATE").await?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
