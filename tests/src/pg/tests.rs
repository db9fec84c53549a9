//! Tests of the throwaway cluster: it starts, listens on 127.0.0.1 only, runs unprivileged,
//! gives each test its own database on the server it is pointed at, and leaves nothing
//! behind.
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use sqlx::{Connection as _, PgConnection};

use super::{PgCluster, TestDb};

/// The postmaster's pid: the first line of `postmaster.pid` in the data dir.
fn postmaster_pid(cluster: &PgCluster) -> u32 {
    let text = std::fs::read_to_string(cluster.data().join("postmaster.pid")).unwrap();
    text.lines().next().unwrap().trim().parse().unwrap()
}

/// Field `name` of `/proc/<pid>/status` (e.g. `Uid`, `State`), `None` once the process is gone.
fn proc_status(pid: u32, name: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name}:")))
        .map(|value| value.trim().to_owned())
}

async fn names_of_databases(admin_url: &str) -> Vec<String> {
    let mut admin = PgConnection::connect(admin_url).await.unwrap();
    sqlx::query_scalar("SELECT datname::TEXT FROM pg_database ORDER BY datname")
        .fetch_all(&mut admin)
        .await
        .unwrap()
}

/// Catches: a server reachable beyond 127.0.0.1 or through a socket in a shared dir, a server
/// run as root (initdb refuses it), a cluster left running or on disk after its owner is gone.
#[tokio::test]
async fn a_cluster_answers_on_loopback_only_runs_unprivileged_and_is_gone_after_drop() {
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .unwrap()
        .unwrap();
    let mut conn = PgConnection::connect(&cluster.admin_url()).await.unwrap();
    let (listen, sockets, port, one): (String, String, String, i32) = sqlx::query_as(
        "SELECT current_setting('listen_addresses'), current_setting('unix_socket_directories'),
                current_setting('port'), 1",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        (listen, sockets, port, one),
        (
            "127.0.0.1".to_owned(),
            cluster.dir().display().to_string(),
            cluster.port().to_string(),
            1
        )
    );
    conn.close().await.unwrap();

    let pid = postmaster_pid(&cluster);
    let uid = proc_status(pid, "Uid").unwrap();
    assert!(
        !uid.starts_with("0\t"),
        "the server runs as root: Uid {uid}"
    );

    let (dir, port) = (cluster.dir().to_owned(), cluster.port());
    tokio::task::spawn_blocking(move || drop(cluster))
        .await
        .unwrap();
    assert!(!dir.exists(), "{} is still there", dir.display());
    // Gone, or a zombie waiting for a reaper that is not ours.
    let state = proc_status(pid, "State");
    assert!(
        state.as_deref().is_none_or(|s| s.starts_with('Z')),
        "the postmaster {pid} is still running: {state:?}"
    );
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// Catches: `SWITCHBOARD_TEST_PG_URL` ignored (a database made elsewhere), a test database
/// left behind. The given server is a cluster of this test's own, as a user's would be.
#[tokio::test]
async fn a_test_database_is_made_on_the_given_server_and_dropped_afterwards() {
    let cluster = tokio::task::spawn_blocking(PgCluster::start)
        .await
        .unwrap()
        .unwrap();
    let db = TestDb::create_with(Some(cluster.admin_url()))
        .await
        .unwrap();
    assert_eq!(db.url(), cluster.url(db.name()));
    assert!(db.name().starts_with("sb_test_"));
    assert!(names_of_databases(&cluster.admin_url())
        .await
        .contains(&db.name().to_owned()));

    // A connection left open does not keep the database from being dropped.
    let mut conn = PgConnection::connect(db.url()).await.unwrap();
    let name: String = sqlx::query_scalar("SELECT current_database()::TEXT")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(name, db.name());
    let name = db.name().to_owned();
    tokio::task::spawn_blocking(move || drop(db)).await.unwrap();
    assert!(!names_of_databases(&cluster.admin_url())
        .await
        .contains(&name));
    drop(conn);
    tokio::task::spawn_blocking(move || drop(cluster))
        .await
        .unwrap();
}

/// Catches: tests sharing a database, or the shared cluster started once per test.
#[tokio::test]
async fn tests_on_the_shared_cluster_each_get_a_database_of_their_own() {
    let (a, b) = (
        TestDb::create_with(None).await.unwrap(),
        TestDb::create_with(None).await.unwrap(),
    );
    assert_ne!(a.name(), b.name());
    let shared = PgCluster::shared().unwrap();
    assert_eq!(a.url(), shared.url(a.name()));
    assert_eq!(b.url(), shared.url(b.name()));
    let mut conn = PgConnection::connect(a.url()).await.unwrap();
    sqlx::query("CREATE TABLE only_in_a (x BIGINT)")
        .execute(&mut conn)
        .await
        .unwrap();
    let mut conn = PgConnection::connect(b.url()).await.unwrap();
    let found: Option<String> = sqlx::query_scalar("SELECT to_regclass('only_in_a')::TEXT")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(found, None);
}
