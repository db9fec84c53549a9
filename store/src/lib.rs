//! Persistence through sqlx, on SQLite (the default) or PostgreSQL. Sessions, transcripts,
//! the inbox of waiting messages, runs and the outbox. Every state change that must
//! survive a restart goes through here and is committed before the caller acts on it.
//!
//! `Store` is the one type the gateway uses. It holds an engine (`sqlite::Sqlite` or
//! `pg::Pg`); each public method is a static dispatch to the engine's method of the same
//! name (`engine::engine_fns!`, invoked per area next to that area's row types).
//!
//! Architecture invariant: only `store` knows SQL. Callers get plain Rust rows.
//! Architecture invariant: only `store::sqlite` and `store::pg` know their engine; the
//! area modules here (`sessions`, `runs`, …) hold what both share: rows, states, the API,
//! and one decoder per row type that both engines call (`decode::Columns`).

mod announces;
mod approvals;
mod channels;
mod choices;
mod compactions;
mod cron;
mod decode;
mod engine;
pub mod health;
mod inbox;
mod interrupts;
mod leases;
mod ledger;
mod media_files;
mod messages;
mod notify;
mod outbox;
mod progress;
mod runs;
mod sessions;
mod sql;
mod sqlite;
mod starts;
mod states;
mod subagents;
mod text;
mod usage;
mod worktrees;

pub mod pg;

use std::time::{SystemTime, UNIX_EPOCH};

use engine::Engine;

pub use announces::AnnounceMessage;
pub use approvals::{AllowEntry, ApprovalRow, ApprovalStatus, NewApproval};
pub use channels::{Pairing, PairingRow};
pub use choices::{Choice, SessionChoices};
pub use compactions::{CompactionRow, NewCompaction};
pub use cron::{CronFire, CronJobRow, JobSource, JobSpec};
pub use inbox::{Claim, InboxItem, NewInbound, WaitingSession};
pub use leases::{process_lease, Lease, GATEWAY_LEASE};
pub use ledger::PoisonedUpdate;
pub use messages::{MessageRow, NewMessage, Role, ToolCallRecord};
pub use outbox::{OutboxRow, API_CHANNEL};
pub use pg::RowLeases;
pub use progress::ProgressLine;
pub use runs::{NewRun, RunEnd, RunFinished, RunRow, RunStatus};
pub use sessions::{SessionRow, SessionStatus};
pub use starts::{NewTurn, Started};
pub use subagents::{AnnounceState, Cleanup, NewSubagent, Outcome, SubagentRow, INTERNAL_CHANNEL};
pub use usage::{CallUsage, UsageTotals};
pub use worktrees::{WorktreeRow, WorktreeState};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    /// From the group-commit writer's own connection (rusqlite, `sqlite::writer`).
    #[error("database error: {0}")]
    Script(#[from] rusqlite::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("the store is closed")]
    Closed,
    /// Shared mode: the run cannot start while another process runs one of its session's.
    #[error("session {0} has a run on another process")]
    SessionBusy(String),
    #[error("cannot create the database folder {}: {source}", path.display())]
    Folder {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The database handle. Cheap to clone.
///
/// On SQLite every write goes through one writer connection, reads through a few reader
/// connections; on PostgreSQL both go through a pool. Only this module knows SQL.
#[derive(Clone)]
pub struct Store {
    engine: Engine,
}

impl Store {
    /// Open (creating if missing) the SQLite database at `url`, switch to WAL and migrate.
    pub async fn open(url: &str) -> Result<Store> {
        Ok(Store {
            engine: Engine::Sqlite(sqlite::Sqlite::open(url).await?),
        })
    }

    /// An in-memory SQLite database (tests).
    pub async fn open_in_memory() -> Result<Store> {
        Ok(Store {
            engine: Engine::Sqlite(sqlite::Sqlite::open_in_memory().await?),
        })
    }

    /// The store `url` names: PostgreSQL for `postgres://` and `postgresql://`
    /// ([`Store::open_postgres`]), SQLite otherwise ([`Store::open`]).
    pub async fn connect(url: &str) -> Result<Store> {
        if is_postgres_url(url) {
            Store::open_postgres(url).await
        } else {
            Store::open(url).await
        }
    }

    /// Connect to the PostgreSQL database at `url` (`postgres://…`), after applying its
    /// migrations under the migrator's lock (`pg::migrate`). On PostgreSQL one process is
    /// active at a time, under the `gateway` lease (the gateway's `standby`, docs/postgres.md).
    pub async fn open_postgres(url: &str) -> Result<Store> {
        Ok(Store {
            engine: Engine::Postgres(pg::Pg::open(url, None).await?),
        })
    }

    /// [`Store::open_postgres`] for a process in shared mode: the runs it queues or starts
    /// and the outbox rows it sends are leased to `member.owner` (docs/postgres.md, "Shared
    /// mode").
    pub async fn open_postgres_shared(url: &str, member: RowLeases) -> Result<Store> {
        Ok(Store {
            engine: Engine::Postgres(pg::Pg::open(url, Some(member)).await?),
        })
    }

    /// Flush what the engine keeps for later (SQLite checkpoints its WAL); the connections
    /// close when the last handle is dropped.
    pub async fn close(&self) {
        match &self.engine {
            Engine::Sqlite(e) => e.close().await,
            Engine::Postgres(e) => e.close().await,
        }
    }

    /// Run one SQL statement (on SQLite's writer): tests use it to make the store fail on
    /// purpose (e.g. a trigger that aborts inserts).
    #[cfg(any(test, feature = "test-hooks"))]
    pub async fn execute_for_tests(&self, sql: &str) -> Result<()> {
        match &self.engine {
            Engine::Sqlite(e) => e.execute_for_tests(sql).await,
            Engine::Postgres(e) => e.execute_for_tests(sql).await,
        }
    }

    /// SQLite's round trips to the database so far, reads and writes (each statement, or
    /// script, or transaction on one connection counts one); `None` on PostgreSQL. Tests
    /// check what a turn costs with it.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn round_trips_for_tests(&self) -> Option<(u64, u64)> {
        match &self.engine {
            Engine::Sqlite(e) => Some(e.round_trips_for_tests()),
            Engine::Postgres(_) => None,
        }
    }

    /// The `i64` that one SQL query (portable between the engines) answers (tests).
    #[cfg(test)]
    pub(crate) async fn count_for_tests(&self, sql: &str) -> Result<i64> {
        match &self.engine {
            Engine::Sqlite(e) => e.count_for_tests(sql).await,
            Engine::Postgres(e) => e.count_for_tests(sql).await,
        }
    }

    /// Whether this store runs on PostgreSQL (several processes may share its database).
    pub fn is_postgres(&self) -> bool {
        matches!(self.engine, Engine::Postgres(_))
    }

    /// Which engine this store runs on (`"SQLite"` or `"PostgreSQL"`).
    pub fn engine_name(&self) -> &'static str {
        match &self.engine {
            Engine::Sqlite(_) => "SQLite",
            Engine::Postgres(_) => pg::ENGINE,
        }
    }
}

/// Whether `url` names a PostgreSQL database (`postgres://` or `postgresql://`); any other
/// URL is SQLite's.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// Creates `dir` (and its missing parents) readable by its owner only: transcripts of
/// private chats live under it. An existing folder keeps its permissions.
pub fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
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
