//! `LISTEN`/`NOTIFY` on a real server: listeners on connections of their own hear what any
//! connection sends, and one whose connection is killed reconnects and hears again.

use std::time::Duration;

use sqlx::{Connection as _, PgConnection};
use switchboard_channels::backoff::Backoff;
use switchboard_testkit::pg::TestDb;

use super::*;

const CHANNEL: &str = "bus_test";
/// A bound on each wait, so a broken listener fails the test instead of hanging it.
const WAIT: Duration = Duration::from_secs(60);

async fn next(l: &mut Listener) -> String {
    tokio::time::timeout(WAIT, l.recv()).await.unwrap().payload
}

/// Catches: a listener taken from the pool (the turn's 16 connections), notifications
/// reordered or lost between connections, and a listener that stays deaf after its
/// connection is killed (`pg_terminate_backend`, as an operator or a failover does).
#[tokio::test]
async fn listeners_hear_every_connection_and_hear_again_after_their_connection_is_killed() {
    let db = TestDb::create().await.unwrap();
    let pg = Pg::open(db.url(), None).await.unwrap();
    let pooled = pg.pool.size();
    let backoff = Backoff::new(Duration::from_millis(10), Duration::from_millis(200));
    let mut a = pg.listener(&[CHANNEL], backoff).await.unwrap();
    let mut b = pg.listener(&[CHANNEL], backoff).await.unwrap();
    assert_eq!(
        pg.pool.size(),
        pooled,
        "listeners have connections of their own"
    );

    let mut third = PgConnection::connect(db.url()).await.unwrap();
    sqlx::query("SELECT pg_notify($1, 'one')")
        .bind(CHANNEL)
        .execute(&mut third)
        .await
        .unwrap();
    // (Distinct: PostgreSQL delivers one of identical payloads sent in one transaction.)
    pg.notify(CHANNEL, &["two".into(), "three".into(), "four".into()])
        .await
        .unwrap();
    for l in [&mut a, &mut b] {
        let mut heard = Vec::new();
        for _ in 0..4 {
            heard.push(next(l).await);
        }
        assert_eq!(heard, ["one", "two", "three", "four"]);
    }

    let killed = a.backend_pid().unwrap();
    let ok: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(killed)
        .fetch_one(&mut third)
        .await
        .unwrap();
    assert!(ok);
    // The signal is sent, not yet acted on: until the backend has exited, a notification
    // still reaches `a` on its old connection. Wait for it to be gone.
    loop {
        let alive: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)")
                .bind(killed)
                .fetch_one(&mut third)
                .await
                .unwrap();
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // What is sent while `a` reconnects is lost to it: send until it hears.
    let heard = tokio::spawn(async move {
        let n = next(&mut a).await;
        (n, a)
    });
    let mut sent = 0;
    while !heard.is_finished() {
        sqlx::query("SELECT pg_notify($1, 'again')")
            .bind(CHANNEL)
            .execute(&mut third)
            .await
            .unwrap();
        sent += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (n, a) = heard.await.unwrap();
    assert_eq!(n, "again");
    assert_eq!(a.reconnects(), 1);
    assert_ne!(a.backend_pid(), Some(killed));
    // `b` lost nothing.
    for _ in 0..sent {
        assert_eq!(next(&mut b).await, "again");
    }
    assert_eq!(b.reconnects(), 0);
}
