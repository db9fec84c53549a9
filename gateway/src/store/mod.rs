//! Persistence: SQLite through sqlx. Sessions, transcripts, the inbox of waiting
//! messages, runs and the outbox. Every state change that must survive a restart goes
//! through here and is committed before the caller acts on it.
//!
//! Architecture invariant: only `store` knows SQL. Callers get plain Rust rows.

#[path = "sqlite/announces.rs"]
mod announces;
#[path = "sqlite/approvals.rs"]
mod approvals;
#[path = "sqlite/channels.rs"]
mod channels;
#[path = "sqlite/conns.rs"]
mod conns;
#[path = "sqlite/cron.rs"]
mod cron;
pub mod health;
#[path = "sqlite/inbox.rs"]
mod inbox;
#[path = "sqlite/interrupts.rs"]
mod interrupts;
#[path = "sqlite/ledger.rs"]
mod ledger;
#[path = "sqlite/messages.rs"]
mod messages;
#[path = "sqlite/outbox.rs"]
mod outbox;
#[path = "sqlite/progress.rs"]
mod progress;
#[path = "sqlite/runs.rs"]
mod runs;
#[path = "sqlite/sessions.rs"]
mod sessions;
#[path = "sqlite/starts.rs"]
mod starts;
mod states;
#[path = "sqlite/subagents.rs"]
mod subagents;
mod text;
#[path = "sqlite/transcripts.rs"]
mod transcripts;
#[path = "sqlite/worktrees.rs"]
mod worktrees;
#[path = "sqlite/writer.rs"]
mod writer;

pub mod pg;

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};

use conns::Conns;

pub use announces::AnnounceMessage;
pub use approvals::{AllowEntry, ApprovalRow, ApprovalStatus, NewApproval};
pub use channels::{Pairing, PairingRow};
pub use cron::{CronFire, CronJobRow, JobSource};
pub use inbox::{Claim, InboxItem, NewInbound, WaitingSession};
pub use ledger::PoisonedUpdate;
pub use messages::{MessageRow, NewMessage, Role, ToolCallRecord};
pub use outbox::{OutboxRow, API_CHANNEL};
pub use progress::ProgressLine;
pub use runs::{NewRun, RunEnd, RunFinished, RunRow, RunStatus};
pub use sessions::{SessionRow, SessionStatus};
pub use starts::Started;
pub use subagents::{AnnounceState, Cleanup, NewSubagent, Outcome, SubagentRow, INTERNAL_CHANNEL};
pub use worktrees::{WorktreeRow, WorktreeState};

/// Embedded migrations, applied at start.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("the store is closed")]
    Closed,
    #[error("cannot create the database folder {}: {source}", path.display())]
    Folder {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The database handle. Cheap to clone.
///
/// Every write goes through the one writer connection, reads through a few reader
/// connections (see `conns`). Only this module knows SQL.
#[derive(Clone)]
pub struct Store {
    conns: Arc<Conns>,
    sessions: sessions::SessionCache,
    transcripts: transcripts::TranscriptCache,
}

impl Store {
    /// Open (creating if missing) the database at `url`, switch to WAL and migrate.
    pub async fn open(url: &str) -> Result<Store> {
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
            .busy_timeout(Duration::from_secs(10))
            // Room for the group-commit writer's chunked scripts (see `writer`).
            .statement_cache_capacity(256)
            // A chunk's rows (transcripts of up to 16 starts) are sent by the connection's
            // thread as it steps; with sqlx's default of 50 it waits for the writer task to
            // take them, which under load sits in the runtime's queue.
            .row_buffer_size(4096)
            .foreign_keys(true);
        let conns = Conns::open(&opts, true, migrate).await?;
        if let (true, Some(file)) = (created, &file) {
            make_private(file);
        }
        Ok(Store {
            conns,
            sessions: Default::default(),
            transcripts: Default::default(),
        })
    }

    /// An in-memory database (tests). One connection, both the reader and the writer:
    /// every connection to `:memory:` is a database of its own.
    pub async fn open_in_memory() -> Result<Store> {
        let opts = SqliteConnectOptions::from_str("sqlite::memory:")?.foreign_keys(true);
        let conns = Conns::open(&opts, false, migrate).await?;
        Ok(Store {
            conns,
            sessions: Default::default(),
            transcripts: Default::default(),
        })
    }

    /// The writer connection (held until the guard drops).
    async fn writer(&self) -> tokio::sync::MutexGuard<'_, sqlx::SqliteConnection> {
        self.conns.writer().await
    }

    /// A reader connection (held until the guard drops).
    async fn reader(&self) -> tokio::sync::MutexGuard<'_, sqlx::SqliteConnection> {
        self.conns.reader().await
    }

    pub async fn close(&self) {
        self.conns.close().await;
    }

    /// Run one SQL statement on the writer: tests use it to make the store fail on purpose
    /// (e.g. a trigger that aborts inserts).
    #[cfg(test)]
    pub(crate) async fn execute_for_tests(&self, sql: &str) -> Result<()> {
        sqlx::query(sql).execute(&mut *self.writer().await).await?;
        Ok(())
    }
}

/// Creates `dir` (and its missing parents) readable by its owner only: transcripts of
/// private chats live under it. An existing folder keeps its permissions.
pub(crate) fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
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
async fn migrate(w: &mut sqlx::SqliteConnection) -> Result<()> {
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

/// Current time as unix milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn from_json<T: serde::de::DeserializeOwned>(s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| StoreError::Corrupt(format!("{e}: {s}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
