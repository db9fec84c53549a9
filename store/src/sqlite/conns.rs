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
//! (a turn's scripts) go through the group-commit writer task (`writer`), which runs them
//! on a connection of its own (rusqlite, on the task's thread: no hand-off to a connection
//! thread) and takes the same mutex once per batch, so the two never write at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection as _};
use tokio::sync::{Mutex, MutexGuard};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::row::Row;
use super::writer::{Params, Shrinker, Writer};
use super::Result;

/// Reader connections. Readers never block each other or the writer in WAL mode. A
/// turn's reads and writes go through the writer's scripts, so readers serve the
/// occasional lookup (an API view, a command, the checkpoint); each one more costs a
/// thread, a page cache and its own prepared statements (docs/performance.md, "Memory
/// after use").
const READERS: usize = 2;

pub(super) struct Conns {
    writer: Arc<Mutex<SqliteConnection>>,
    /// The group-commit queue onto `writer` (the hot writes).
    batches: Writer,
    /// Stops the checkpoint task (file databases only) when the store is dropped.
    _checkpoints: Option<DropGuard>,
    /// Empty for an in-memory database, whose only connection is the writer.
    readers: Vec<Arc<Mutex<SqliteConnection>>>,
    next_reader: AtomicUsize,
    /// Round trips asked for so far, for tests that check what a turn costs.
    #[cfg(any(test, feature = "test-hooks"))]
    trips: RoundTrips,
}

/// Round trips to the database: a reader or the writer taken (`reader`, `writer`), or a
/// script written (`write`), counts one. (Tests only: a turn's are checked by
/// `routing::turn_tests`.)
#[cfg(any(test, feature = "test-hooks"))]
#[derive(Debug, Default)]
pub(super) struct RoundTrips {
    reads: std::sync::atomic::AtomicU64,
    writes: std::sync::atomic::AtomicU64,
}

/// How often the WAL is checkpointed into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// A WAL this long (pages written since it last started over, 16 MB at 4 KiB) has not
/// been started over for a while: the checkpoint catches up on the writer.
const CATCH_UP_AFTER: i64 = 4096;

/// Each reader's page cache, in KiB (SQLite's default is 2,000 per connection). Readers
/// serve the occasional lookup (a turn's writes and reads go through the writer's
/// scripts), and what one misses comes from the OS page cache; five full default caches
/// were 10 MB of the daemon's resident memory after a day's turns (docs/performance.md,
/// "Memory after use").
const READER_CACHE_KIB: u32 = 256;

/// Quiet checkpoint ticks (no write in between) after which every connection gives its
/// page cache back (`PRAGMA shrink_memory`): a daemon that went quiet keeps little more
/// than it did at start.
const SHRINK_AFTER_QUIET_TICKS: u32 = 5;

/// Checkpoint the WAL every `every` (`CHECKPOINT_EVERY`) on the first of `readers` until
/// `cancel`; once the database has been quiet for `SHRINK_AFTER_QUIET_TICKS` ticks, the
/// page caches of the writer and the readers are released (once per quiet spell).
///
/// Why not SQLite's automatic checkpoint: it runs inside the commit that crosses 1,000
/// WAL pages, on the writer, with an fsync of the database file: one turn in a hundred
/// took milliseconds longer (the p99 of the turn overhead). A passive checkpoint on a
/// reader copies what no reader still needs and blocks no one.
///
/// Under sustained load that alone never ends: a write starts the WAL over from its
/// beginning only when the WAL was wholly copied, and the writer appends while the
/// checkpoint copies. The WAL grew by 45–75 MB a second under the throughput bench,
/// every frame written to fresh file blocks, without bound. So when the WAL is longer
/// than `CATCH_UP_AFTER` pages, a second passive checkpoint runs on the writer between
/// two group commits: it copies only what was appended meanwhile, and the next write
/// starts the WAL over (unless a reader still reads an older snapshot; then the next
/// tick tries again). The WAL stays within about a second's writes.
pub(super) async fn checkpoints(
    readers: Vec<Arc<Mutex<SqliteConnection>>>,
    writer: Arc<Mutex<SqliteConnection>>,
    scripts: Shrinker,
    every: Duration,
    on_quiet: OnQuiet,
    cancel: CancellationToken,
) {
    let Some(reader) = readers.first().cloned() else {
        return;
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The WAL's length is the same from one tick to the next exactly when nothing was
    // written in between (a write appends to it or starts it over).
    let (mut last_wal, mut quiet) = (-1, 0u32);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        let wal = checkpoint(&mut *reader.lock().await).await;
        if wal > CATCH_UP_AFTER {
            checkpoint(&mut *writer.lock().await).await;
        }
        quiet = if wal == last_wal {
            quiet.saturating_add(1)
        } else {
            0
        };
        last_wal = wal;
        if quiet == SHRINK_AFTER_QUIET_TICKS {
            on_quiet();
            scripts.shrink().await;
            shrink(&writer).await;
            for r in &readers {
                shrink(r).await;
            }
        }
    }
}

/// What else gives memory back when the database goes quiet (the store's caches), run
/// before the connections' own release.
pub(super) type OnQuiet = Box<dyn Fn() + Send + Sync>;

/// Give `conn`'s memory back: its prepared statements (the next statements prepare again,
/// once) and then its unused page cache (`PRAGMA shrink_memory`). An error is logged.
async fn shrink(conn: &Mutex<SqliteConnection>) {
    let mut conn = conn.lock().await;
    if let Err(e) = conn.clear_cached_statements().await {
        tracing::warn!(error = %e, "cannot release the database's prepared statements");
    }
    if let Err(e) = sqlx::query("PRAGMA shrink_memory")
        .persistent(false)
        .execute(&mut *conn)
        .await
    {
        tracing::warn!(error = %e, "cannot release the database's cache");
    }
}

/// A passive checkpoint on `conn`: the WAL's length in pages (0 on an error, which is
/// logged).
async fn checkpoint(conn: &mut SqliteConnection) -> i64 {
    match sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(conn)
        .await
    {
        Ok((_busy, pages, _copied)) => pages,
        Err(e) => {
            tracing::warn!(error = %e, "cannot checkpoint the database");
            0
        }
    }
}

impl Conns {
    /// The writer, then the readers, all with `opts`. `prepare` runs on the writer
    /// before any reader opens (migrations). Without `on_quiet` (an in-memory database)
    /// the writer is the only connection, with no checkpoint task; with it, the task
    /// runs it at each quiet spell before the connections give their memory back.
    pub(super) async fn open(
        opts: &SqliteConnectOptions,
        on_quiet: Option<OnQuiet>,
        prepare: impl AsyncFnOnce(&mut SqliteConnection) -> Result<()>,
    ) -> Result<Arc<Conns>> {
        let mut writer = opts.connect().await?;
        prepare(&mut writer).await?;
        let in_memory = on_quiet.is_none();
        let writer = Arc::new(Mutex::new(writer));
        let batches = Writer::start(script_connection(opts, in_memory)?, writer.clone());
        let mut conns = Vec::new();
        let mut stop_checkpoints = None;
        if let Some(on_quiet) = on_quiet {
            // The writer's commits no longer checkpoint the WAL themselves; a task does,
            // off the writer's path (see `checkpoints`).
            sqlx::query("PRAGMA wal_autocheckpoint = 0")
                .execute(&mut *writer.lock().await)
                .await?;
            let reader_opts = opts
                .clone()
                .pragma("cache_size", format!("-{READER_CACHE_KIB}"));
            // Side by side: each opens on its own thread (a start waits for one, not all).
            let opened =
                futures::future::try_join_all((0..READERS).map(|_| reader_opts.connect())).await?;
            conns.extend(opened.into_iter().map(|c| Arc::new(Mutex::new(c))));
            let cancel = CancellationToken::new();
            tokio::spawn(checkpoints(
                conns.clone(),
                writer.clone(),
                batches.shrinker(),
                CHECKPOINT_EVERY,
                on_quiet,
                cancel.clone(),
            ));
            stop_checkpoints = Some(cancel.drop_guard());
        }
        Ok(Arc::new(Conns {
            batches,
            _checkpoints: stop_checkpoints,
            writer,
            readers: conns,
            next_reader: AtomicUsize::new(0),
            #[cfg(any(test, feature = "test-hooks"))]
            trips: RoundTrips::default(),
        }))
    }

    /// The writer connection, once every earlier writer is done with it.
    pub(super) async fn writer(&self) -> MutexGuard<'_, SqliteConnection> {
        #[cfg(any(test, feature = "test-hooks"))]
        self.trips.writes.fetch_add(1, Ordering::Relaxed);
        self.writer.lock().await
    }

    /// The round trips asked for so far: reads, writes (tests).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(super) fn round_trips(&self) -> (u64, u64) {
        (
            self.trips.reads.load(Ordering::Relaxed),
            self.trips.writes.load(Ordering::Relaxed),
        )
    }

    /// Run a script with its parameters through the group-commit writer (see `writer`).
    pub(super) async fn write(&self, params: &impl Params) -> Result<Vec<Row>> {
        let (script, args) = (params.script(), params.args()?);
        debug_assert_eq!(args.len(), script.placeholders, "{}", script.body);
        #[cfg(any(test, feature = "test-hooks"))]
        self.trips.writes.fetch_add(1, Ordering::Relaxed);
        self.batches.write(script, args).await
    }

    /// A reader connection: a free one if there is one, else the next in turn.
    pub(super) async fn reader(&self) -> MutexGuard<'_, SqliteConnection> {
        #[cfg(any(test, feature = "test-hooks"))]
        self.trips.reads.fetch_add(1, Ordering::Relaxed);
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

/// The group-commit writer's own connection to the database of `opts`, set up as the
/// store's writer is: foreign keys on, `synchronous = NORMAL` and (a file, in WAL mode) no
/// automatic checkpoint; but no busy timeout (the writer waits for another process's
/// lock itself, asleep: `writer::BusyWaits`). An in-memory database is shared with the
/// store's connection through SQLite's shared cache, as sqlx opens it.
fn script_connection(opts: &SqliteConnectOptions, in_memory: bool) -> Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let cache = if in_memory {
        OpenFlags::SQLITE_OPEN_MEMORY | OpenFlags::SQLITE_OPEN_SHARED_CACHE
    } else {
        OpenFlags::SQLITE_OPEN_PRIVATE_CACHE
    };
    let c = rusqlite::Connection::open_with_flags(
        opts.get_filename(),
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | cache,
    )?;
    c.busy_timeout(Duration::ZERO)?;
    c.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")?;
    if !in_memory {
        c.execute_batch("PRAGMA wal_autocheckpoint = 0;")?;
    }
    Ok(c)
}
