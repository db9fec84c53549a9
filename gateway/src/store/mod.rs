//! Persistence: SQLite through sqlx. Sessions, transcripts, the inbox of waiting
//! messages, runs and the outbox. Every state change that must survive a restart goes
//! through here and is committed before the caller acts on it.
//!
//! Architecture invariant: only `store` knows SQL. Callers get plain Rust rows.

mod channels;
mod inbox;
mod messages;
mod outbox;
mod runs;
mod sessions;
mod subagents;

use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

pub use channels::{Pairing, PairingRow};
pub use inbox::InboxItem;
pub use messages::{MessageRow, NewMessage, Role, ToolCallRecord};
pub use outbox::OutboxRow;
pub use runs::{NewRun, RunEnd, RunRow, RunStatus};
pub use sessions::SessionRow;
pub use subagents::{NewSubagent, SubagentRow};

/// Embedded migrations, applied at start.
static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

/// Reader connections. Readers never block in WAL mode.
const POOL_SIZE: u32 = 8;

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
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The database handle. Cheap to clone.
///
/// Every write goes through `writer`, a pool of exactly one connection: SQLite allows one
/// writer at a time, and two connections that collide on the write lock make the loser
/// sleep in SQLite's busy handler (1, 2, 5, 10 ms …). With one writer connection, writers
/// queue on an async pool instead and wake the moment it is free.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
    writer: SqlitePool,
}

impl Store {
    /// Open (creating if missing) the database at `url`, switch to WAL and migrate.
    pub async fn open(url: &str) -> Result<Store> {
        let opts = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .connect_with(opts.clone())
            .await?;
        MIGRATOR.run(&writer).await?;
        let pool = SqlitePoolOptions::new()
            .max_connections(POOL_SIZE)
            .connect_with(opts)
            .await?;
        Ok(Store { pool, writer })
    }

    /// An in-memory database (tests).
    pub async fn open_in_memory() -> Result<Store> {
        let opts = SqliteConnectOptions::from_str("sqlite::memory:")?.foreign_keys(true);
        // One connection: every connection to :memory: is its own database.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(opts)
            .await?;
        MIGRATOR.run(&pool).await?;
        // The single connection is both the reader and the writer.
        Ok(Store {
            writer: pool.clone(),
            pool,
        })
    }

    /// Begin a write transaction. `BEGIN IMMEDIATE` takes the write lock up front, so a
    /// transaction that reads before it writes never fails with SQLITE_BUSY on the lock
    /// upgrade (the busy timeout only covers waiting for the lock, not upgrading it).
    pub(crate) async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.writer.begin_with("BEGIN IMMEDIATE").await?)
    }

    pub async fn close(&self) {
        self.pool.close().await;
        self.writer.close().await;
    }
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
