//! The store's connections: one writer and a few readers, each owned behind an async
//! mutex rather than kept in a sqlx `Pool`.
//!
//! Why not a pool: every statement on a sqlx-sqlite connection is a round trip to the
//! connection's own worker thread, and a pool adds one more per use: it pings the
//! connection each time it is released (plus a spawned task to put it back). For the
//! writer, through which every write of every turn passes one after another, that was
//! half of its round trips. A dropped `Transaction` still rolls back: sqlx queues the
//! `ROLLBACK` on the connection's worker, ahead of the next statement.
//!
//! One writer, because SQLite allows one at a time: two writer connections colliding on
//! the write lock make the loser sleep in SQLite's busy handler (1, 2, 5, 10 ms …); with
//! one, writers queue on the mutex (FIFO) and wake the moment it is free. The hot writes
//! (a turn's scripts) go through the group-commit writer task (`writer`), which takes the
//! same mutex once per batch.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteRow};
use sqlx::ConnectOptions;
use tokio::sync::{Mutex, MutexGuard};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::writer::{Params, Writer};
use super::Result;

/// Reader connections. Readers never block each other or the writer in WAL mode.
const READERS: usize = 4;

pub(super) struct Conns {
    writer: Arc<Mutex<SqliteConnection>>,
    /// The group-commit queue onto `writer` (the hot writes).
    batches: Writer,
    /// Stops the checkpoint task (file databases only) when the store is dropped.
    _checkpoints: Option<DropGuard>,
    /// Empty for an in-memory database, whose only connection is the writer.
    readers: Vec<Arc<Mutex<SqliteConnection>>>,
    next_reader: AtomicUsize,
}

/// How often the WAL is checkpointed into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// Checkpoint the WAL every `CHECKPOINT_EVERY` on `conn` (a reader) until `cancel`.
///
/// Why not SQLite's automatic checkpoint: it runs inside the commit that crosses 1,000
/// WAL pages, on the writer, with an fsync of the database file: one turn in a hundred
/// took milliseconds longer (the p99 of the turn overhead). A passive checkpoint on a
/// reader copies what no reader still needs and blocks no one.
async fn checkpoints(conn: Arc<Mutex<SqliteConnection>>, cancel: CancellationToken) {
    let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        let mut c = conn.lock().await;
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut *c)
            .await
        {
            tracing::warn!(error = %e, "cannot checkpoint the database");
        }
    }
}

impl Conns {
    /// The writer, then the readers, all with `opts`. `prepare` runs on the writer
    /// before any reader opens (migrations).
    pub(super) async fn open(
        opts: &SqliteConnectOptions,
        readers: bool,
        prepare: impl AsyncFnOnce(&mut SqliteConnection) -> Result<()>,
    ) -> Result<Arc<Conns>> {
        let mut writer = opts.connect().await?;
        prepare(&mut writer).await?;
        let mut conns = Vec::new();
        let mut stop_checkpoints = None;
        if readers {
            // The writer's commits no longer checkpoint the WAL themselves; a task does,
            // off the writer's path (see `checkpoints`).
            sqlx::query("PRAGMA wal_autocheckpoint = 0")
                .execute(&mut writer)
                .await?;
            for _ in 0..READERS {
                conns.push(Arc::new(Mutex::new(opts.connect().await?)));
            }
            let cancel = CancellationToken::new();
            tokio::spawn(checkpoints(conns[0].clone(), cancel.clone()));
            stop_checkpoints = Some(cancel.drop_guard());
        }
        let writer = Arc::new(Mutex::new(writer));
        Ok(Arc::new(Conns {
            batches: Writer::start(writer.clone()),
            _checkpoints: stop_checkpoints,
            writer,
            readers: conns,
            next_reader: AtomicUsize::new(0),
        }))
    }

    /// The writer connection, once every earlier writer is done with it.
    pub(super) async fn writer(&self) -> MutexGuard<'_, SqliteConnection> {
        self.writer.lock().await
    }

    /// Run a script with its parameters through the group-commit writer (see `writer`).
    pub(super) async fn write(&self, params: &impl Params) -> Result<Vec<SqliteRow>> {
        let (script, args) = (params.script(), params.args()?);
        debug_assert_eq!(args.len(), script.placeholders, "{}", script.body);
        self.batches.write(script, args).await
    }

    /// A reader connection: a free one if there is one, else the next in turn.
    pub(super) async fn reader(&self) -> MutexGuard<'_, SqliteConnection> {
        if self.readers.is_empty() {
            return self.writer().await;
        }
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        let n = self.readers.len();
        for i in 0..n {
            if let Ok(conn) = self.readers[(start + i) % n].try_lock() {
                return conn;
            }
        }
        self.readers[start % n].lock().await
    }

    /// Checkpoint the WAL into the database file (at shutdown; the connections close
    /// when the last handle is dropped).
    pub(super) async fn close(&self) {
        let mut w = self.writer().await;
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut *w)
            .await
        {
            tracing::warn!(error = %e, "cannot checkpoint the database");
        }
    }
}
