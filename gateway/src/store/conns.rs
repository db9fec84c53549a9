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
//! one, writers queue on the mutex (FIFO) and wake the moment it is free.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::ConnectOptions;
use tokio::sync::{Mutex, MutexGuard};

use super::Result;

/// Reader connections. Readers never block each other or the writer in WAL mode.
const READERS: usize = 4;

pub(super) struct Conns {
    writer: Mutex<SqliteConnection>,
    /// Empty for an in-memory database, whose only connection is the writer.
    readers: Vec<Mutex<SqliteConnection>>,
    next_reader: AtomicUsize,
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
        if readers {
            for _ in 0..READERS {
                conns.push(Mutex::new(opts.connect().await?));
            }
        }
        Ok(Arc::new(Conns {
            writer: Mutex::new(writer),
            readers: conns,
            next_reader: AtomicUsize::new(0),
        }))
    }

    /// The writer connection, once every earlier writer is done with it.
    pub(super) async fn writer(&self) -> MutexGuard<'_, SqliteConnection> {
        self.writer.lock().await
    }

    /// A reader connection: a free one if there is one, else the next in turn.
    pub(super) async fn reader(&self) -> MutexGuard<'_, SqliteConnection> {
        if self.readers.is_empty() {
            return self.writer.lock().await;
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
