//! The PostgreSQL migrations on a real server (the test kit's throwaway cluster, or
//! `SWITCHBOARD_TEST_PG_URL`): they apply to an empty database, a second run applies
//! nothing, two migrators started together wait for each other's lock, and the translated
//! schema behaves as SQLite's does where the store relies on it (the claim trigger).

use std::time::Duration;

use sqlx::{Connection as _, PgConnection};
use switchboard_testkit::pg::TestDb;

use super::{migrate, migrate_url, Migrated, MIGRATE_LOCK_KEY, MIGRATOR};

/// Every version in `migrations/postgres`, in order.
fn all_versions() -> Vec<i64> {
    MIGRATOR.iter().map(|m| m.version).collect()
}

/// The schema as a comparable value: every table's columns with their types, every index,
/// every trigger.
async fn schema(conn: &mut PgConnection) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
             FROM information_schema.columns WHERE table_schema = 'public'
         UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
         UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger WHERE NOT tgisinternal
         ORDER BY 1",
    )
    .fetch_all(conn)
    .await
    .unwrap()
}

async fn bookkeeping(conn: &mut PgConnection) -> Vec<(i64, String)> {
    sqlx::query_as("SELECT version, installed_on::TEXT FROM _sqlx_migrations ORDER BY version")
        .fetch_all(conn)
        .await
        .unwrap()
}

/// Catches: a migration PostgreSQL refuses, a table or column of the SQLite schema missing
/// in the translation, the lease columns missing.
#[tokio::test]
async fn the_migrations_apply_to_an_empty_database() {
    let db = TestDb::create().await.unwrap();
    let migrated = migrate_url(db.url()).await.unwrap();
    assert_eq!(
        migrated,
        Migrated {
            applied: all_versions()
        }
    );

    let mut conn = PgConnection::connect(db.url()).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::TEXT FROM information_schema.tables
         WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations' ORDER BY 1",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        tables,
        [
            "approval_requests",
            "channel_state",
            "compactions",
            "cron_jobs",
            "exec_allowlist",
            "inbound_attempts",
            "inbound_poisoned",
            "inbound_seen",
            "inbox",
            "leases",
            "messages",
            "outbox",
            "pairings",
            "progress_lines",
            "runs",
            "sessions",
            "subagent_runs",
            "subagent_worktrees",
            "timers",
        ]
    );
    let lease_columns: Vec<String> = sqlx::query_scalar(
        "SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name LIKE 'lease%' ORDER BY 1",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        lease_columns,
        [
            "outbox.lease_expires_at bigint",
            "outbox.lease_owner text",
            "runs.lease_expires_at bigint",
            "runs.lease_owner text",
            "timers.lease_expires_at bigint",
            "timers.lease_owner text",
        ]
    );
}

/// Catches: a second start re-running migrations (or failing on what the first created).
#[tokio::test]
async fn applying_twice_is_a_no_op() {
    let db = TestDb::create().await.unwrap();
    let mut conn = PgConnection::connect(db.url()).await.unwrap();
    migrate(&mut conn).await.unwrap();
    let (schema_before, book_before) = (schema(&mut conn).await, bookkeeping(&mut conn).await);
    assert_eq!(
        book_before.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
        all_versions()
    );

    let again = migrate_url(db.url()).await.unwrap();
    assert_eq!(again, Migrated { applied: vec![] });
    assert_eq!(schema(&mut conn).await, schema_before);
    assert_eq!(bookkeeping(&mut conn).await, book_before);
}

/// Catches: migrators that do not take the lock, or release it before the schema is
/// committed. The test holds the lock itself, starts two migrators, waits until the server
/// shows both waiting for it, then lets go: both succeed, one applied everything, the other
/// nothing.
#[tokio::test]
async fn two_migrators_started_together_both_succeed_and_apply_the_schema_once() {
    let db = TestDb::create().await.unwrap();
    let mut holder = PgConnection::connect(db.url()).await.unwrap();
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATE_LOCK_KEY)
        .execute(&mut holder)
        .await
        .unwrap();

    let a = tokio::spawn(migrate_url_owned(db.url().to_owned()));
    let b = tokio::spawn(migrate_url_owned(db.url().to_owned()));
    // Wait (bounded) for both to queue on the lock: a state of the server, not a delay.
    let waiting = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                 WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()",
            )
            .fetch_one(&mut holder)
            .await
            .unwrap();
            if n == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        waiting.is_ok(),
        "the two migrators never both waited for the lock"
    );

    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(MIGRATE_LOCK_KEY)
        .execute(&mut holder)
        .await
        .unwrap();
    let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
    let mut applied = [a.applied, b.applied];
    applied.sort();
    assert_eq!(applied, [vec![], all_versions()]);
    let versions: Vec<i64> = bookkeeping(&mut holder)
        .await
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    assert_eq!(versions, all_versions());
}

async fn migrate_url_owned(url: String) -> crate::Result<Migrated> {
    migrate_url(&url).await
}

/// Catches: the claim trigger lost in translation (a claimed message would stay in the
/// inbox and be claimed again), or firing for transcript rows that claim nothing.
#[tokio::test]
async fn a_transcript_row_that_names_an_inbox_row_takes_it_out_of_the_inbox() {
    let db = TestDb::create().await.unwrap();
    migrate_url(db.url()).await.unwrap();
    let mut conn = PgConnection::connect(db.url()).await.unwrap();
    sqlx::query(
        "INSERT INTO sessions (id, key, agent_id, origin, created_at, updated_at)
         VALUES ('s1', 'agent:main:main', 'main', '{\"channel\": \"webchat\", \"chatId\": \"c1\"}', 1, 1)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let ids: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO inbox (session_key, origin, sender_id, text, created_at)
         VALUES ('agent:main:main', '{}', 'u', 'one', 1), ('agent:main:main', '{}', 'u', 'two', 2)
         RETURNING id",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    // The store's claim: one INSERT … SELECT moves the first waiting message.
    sqlx::query(
        "INSERT INTO messages (session_id, role, content, inbox_id, created_at)
         SELECT 's1', 'user', text, id, 3 FROM inbox WHERE id = $1",
    )
    .bind(ids[0])
    .execute(&mut conn)
    .await
    .unwrap();
    sqlx::query("INSERT INTO messages (session_id, role, content, created_at) VALUES ('s1', 'assistant', 'hi', 4)")
        .execute(&mut conn)
        .await
        .unwrap();
    let left: Vec<(i64, String)> = sqlx::query_as("SELECT id, text FROM inbox ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, [(ids[1], "two".to_owned())]);
    let transcript: Vec<(String, Option<i64>)> =
        sqlx::query_as("SELECT content, inbox_id FROM messages ORDER BY seq")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    assert_eq!(
        transcript,
        [("one".to_owned(), Some(ids[0])), ("hi".to_owned(), None)]
    );
    // The origin is JSONB: the approvals' lookup by channel and chat works in SQL.
    let key: String = sqlx::query_scalar(
        "SELECT key FROM sessions WHERE origin ->> 'channel' = $1 AND origin ->> 'chatId' = $2",
    )
    .bind("webchat")
    .bind("c1")
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(key, "agent:main:main");
}

/// Every column of the SQLite schema (after all of `migrations/sqlite`) as `table.column type`,
/// with SQLite's types spelled as the translation rules turn them into PostgreSQL's.
async fn sqlite_columns_translated() -> Vec<String> {
    let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
        .await
        .unwrap();
    crate::sqlite::MIGRATOR.run(&mut conn).await.unwrap();
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT m.name, p.name, p.type FROM sqlite_master m, pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '_sqlx_migrations'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut columns: Vec<String> = rows
        .into_iter()
        .map(|(table, column, ty)| {
            let ty = match (table.as_str(), column.as_str(), ty.as_str()) {
                ("sessions", "origin", _) => "jsonb",
                ("cron_jobs", "enabled", _) => "boolean",
                (_, _, "INTEGER") => "bigint",
                (_, _, "REAL") => "double precision",
                (_, _, "TEXT") => "text",
                (_, _, other) => panic!("{table}.{column}: no rule for SQLite type {other}"),
            };
            format!("{table}.{column} {ty}")
        })
        .collect();
    columns.sort();
    columns
}

/// Catches: a SQLite migration without its PostgreSQL twin (a column the store writes that
/// PostgreSQL lacks), or a column translated to a type the store cannot bind. What
/// PostgreSQL has beyond SQLite is exactly the tie-break counters and the leases.
#[tokio::test]
async fn the_postgres_schema_has_every_sqlite_column_with_its_translated_type() {
    let db = TestDb::create().await.unwrap();
    migrate_url(db.url()).await.unwrap();
    let mut conn = PgConnection::connect(db.url()).await.unwrap();
    let pg: Vec<String> = sqlx::query_scalar(
        "SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns
         WHERE table_schema = 'public' AND table_name <> '_sqlx_migrations' ORDER BY 1",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let sqlite = sqlite_columns_translated().await;
    let only_pg: Vec<&String> = pg.iter().filter(|c| !sqlite.contains(c)).collect();
    let only_sqlite: Vec<&String> = sqlite.iter().filter(|c| !pg.contains(c)).collect();
    assert_eq!(only_sqlite, Vec::<&String>::new(), "missing in PostgreSQL");
    let mut expected_extra: Vec<String> = [
        "sessions.seq bigint",
        "runs.seq bigint",
        "subagent_runs.seq bigint",
        "runs.lease_owner text",
        "runs.lease_expires_at bigint",
        "outbox.lease_owner text",
        "outbox.lease_expires_at bigint",
        "timers.lease_owner text",
        "timers.lease_expires_at bigint",
        "leases.name text",
        "leases.owner text",
        "leases.fence bigint",
        "leases.acquired_at bigint",
        "leases.renewed_at bigint",
        "leases.expires_at bigint",
    ]
    .map(String::from)
    .to_vec();
    expected_extra.sort();
    let mut only_pg: Vec<String> = only_pg.into_iter().cloned().collect();
    only_pg.sort();
    assert_eq!(only_pg, expected_extra);
}
