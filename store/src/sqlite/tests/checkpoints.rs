//! SQLite as the store runs it: the checkpoint task keeps the WAL bounded while the
//! writer never pauses; the build takes no lock to count allocations.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection as _};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::super::conns::checkpoints;
use super::super::writer::Writer;

/// Transactions written back to back, each a 4 KB row: ≥ 160 MB of WAL pages in all.
const WRITES: usize = 20_000;

/// Catches: a WAL that only a passive checkpoint on a reader tends. A write starts the
/// WAL over only when the WAL was wholly copied, and this writer appends while the
/// checkpoint copies: the WAL grew with every write (45–75 MB a second under the
/// throughput bench). The catch-up on the writer keeps it near `CATCH_UP_AFTER` pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_that_never_pauses_still_gets_its_wal_started_over() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.db");
    let opts = SqliteConnectOptions::from_str(&format!("sqlite://{}", file.display()))
        .unwrap()
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal);
    let mut conn = opts.connect().await.unwrap();
    for sql in [
        "PRAGMA wal_autocheckpoint = 0",
        "CREATE TABLE t (id INTEGER PRIMARY KEY, x BLOB)",
    ] {
        sqlx::query(sql).execute(&mut conn).await.unwrap();
    }
    let writer = Arc::new(Mutex::new(conn));
    let reader = Arc::new(Mutex::new(opts.connect().await.unwrap()));
    let scripts = Writer::start(rusqlite::Connection::open(&file).unwrap(), writer.clone());
    let cancel = CancellationToken::new();
    let task = tokio::spawn(checkpoints(
        vec![reader],
        writer.clone(),
        scripts.shrinker(),
        Duration::from_millis(20),
        Box::new(|| {}),
        cancel.clone(),
    ));
    for _ in 0..WRITES {
        sqlx::query("INSERT INTO t (x) VALUES (randomblob(4000))")
            .execute(&mut *writer.lock().await)
            .await
            .unwrap();
    }
    cancel.cancel();
    task.await.unwrap();

    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM t")
        .fetch_one(&mut *writer.lock().await)
        .await
        .unwrap();
    assert_eq!(rows, WRITES as i64);
    // The WAL header counts the times the WAL was started over (its checkpoint sequence
    // number, bytes 12..16, big-endian); the file keeps the longest the WAL ever was.
    let wal = std::fs::read(dir.path().join("t.db-wal")).unwrap();
    let restarts = u32::from_be_bytes(wal[12..16].try_into().unwrap());
    assert!(
        restarts >= 2,
        "the WAL was started over {restarts} times and reached {} MB",
        wal.len() >> 20
    );
}

/// Catches: a build of SQLite that counts every allocation under a process-wide mutex
/// (the bundled default; `.cargo/config.toml` turns it off).
#[tokio::test]
async fn sqlite_is_built_without_its_allocation_statistics() {
    let mut conn = SqliteConnectOptions::from_str("sqlite::memory:")
        .unwrap()
        .connect()
        .await
        .unwrap();
    let options: Vec<String> = sqlx::query_scalar("PRAGMA compile_options")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert!(
        options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
        "{options:?}"
    );
}

/// Catches: readers opened with SQLite's default page cache (2,000 KiB each, five
/// connections: 10 MB of the daemon's memory once a day's turns filled them), or the
/// writer's cache cut with them (every turn's writes go through it).
#[tokio::test]
async fn readers_keep_a_small_page_cache_and_the_writer_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let db = super::super::Sqlite::open(&url).await.unwrap();
    let cache_size = "PRAGMA cache_size";
    let reader: i64 = sqlx::query_scalar(cache_size)
        .fetch_one(&mut *db.reader().await)
        .await
        .unwrap();
    let writer: i64 = sqlx::query_scalar(cache_size)
        .fetch_one(&mut *db.writer().await)
        .await
        .unwrap();
    assert_eq!(reader, -256, "KiB");
    assert_eq!(writer, -2000, "SQLite's default");
    db.close().await;
}

/// Catches: a daemon that went quiet keeping every statement it ever prepared (once most
/// of SQLite's memory after a busy spell) or its caches (the transcripts), or a connection that cannot
/// prepare them again afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_spell_releases_the_prepared_statements_and_they_prepare_again() {
    let dir = tempfile::tempdir().unwrap();
    let opts =
        SqliteConnectOptions::from_str(&format!("sqlite://{}", dir.path().join("t.db").display()))
            .unwrap()
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal);
    let mut conn = opts.connect().await.unwrap();
    sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)")
        .execute(&mut conn)
        .await
        .unwrap();
    let writer = Arc::new(Mutex::new(conn));
    let reader = Arc::new(Mutex::new(opts.connect().await.unwrap()));
    let insert = "INSERT INTO t (x) VALUES ($1)";
    let count = "SELECT COUNT(*) FROM t WHERE x = $1";
    for i in 0..10 {
        sqlx::query(insert)
            .bind(i.to_string())
            .execute(&mut *writer.lock().await)
            .await
            .unwrap();
        let _: i64 = sqlx::query_scalar(count)
            .bind(i.to_string())
            .fetch_one(&mut *reader.lock().await)
            .await
            .unwrap();
    }
    assert!(writer.lock().await.cached_statements_size() > 0);
    assert!(reader.lock().await.cached_statements_size() > 0);

    let cancel = CancellationToken::new();
    // The first reader runs the checkpoints (its one statement prepared again at each
    // tick); the second only serves lookups, like the daemon's other reader.
    let first = Arc::new(Mutex::new(opts.connect().await.unwrap()));
    let caches_dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let on_quiet = {
        let dropped = caches_dropped.clone();
        Box::new(move || dropped.store(true, std::sync::atomic::Ordering::SeqCst))
    };
    // The group-commit writer's connection is told too (the loop below waits on it).
    let scripts = Writer::start(
        rusqlite::Connection::open(dir.path().join("t.db")).unwrap(),
        writer.clone(),
    );
    let task = tokio::spawn(checkpoints(
        vec![first, reader.clone()],
        writer.clone(),
        scripts.shrinker(),
        Duration::from_millis(10),
        on_quiet,
        cancel.clone(),
    ));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while writer.lock().await.cached_statements_size() > 0
        || reader.lock().await.cached_statements_size() > 0
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the quiet spell left prepared statements"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cancel.cancel();
    task.await.unwrap();
    assert!(
        caches_dropped.load(std::sync::atomic::Ordering::SeqCst),
        "the store's caches were not told"
    );

    sqlx::query(insert)
        .bind("again")
        .execute(&mut *writer.lock().await)
        .await
        .unwrap();
    let again: i64 = sqlx::query_scalar(count)
        .bind("again")
        .fetch_one(&mut *reader.lock().await)
        .await
        .unwrap();
    assert_eq!(again, 1);
}
