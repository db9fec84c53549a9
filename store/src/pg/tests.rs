//! The PostgreSQL engine's own tests: what only several connections can do to it (the
//! store suite in `store/tests` runs every ported method on this engine too).

use switchboard_channels::{ChatKind, Origin};
use switchboard_testkit::pg::TestDb;

use super::inbox::claim_in;
use super::Pg;
use crate::{now_ms, Claim};

/// Catches: a claim that reads the waiting messages without locking them: a second claim
/// of the same session, started while the first is not yet committed, copies the same
/// messages into the transcript again (the trigger's DELETE finds them gone, but the
/// copies stay).
#[tokio::test]
async fn a_claim_waits_for_a_concurrent_claim_and_finds_its_messages_gone() {
    let db = TestDb::create().await.unwrap();
    let pg = Pg::open(db.url(), None).await.unwrap();
    let o = Origin::webchat("chat-1", ChatKind::Direct);
    let key = "agent:main:main";
    pg.execute_for_tests(
        "INSERT INTO sessions (id, key, agent_id, status, created_at, updated_at)
         VALUES ('s1', 'agent:main:main', 'main', 'active', 0, 0)",
    )
    .await
    .unwrap();
    for text in ["one", "two", "three"] {
        pg.push_inbox(key, &o, "ann", text).await.unwrap();
    }

    let mut first = pg.pool.begin().await.unwrap();
    let taken = claim_in(&mut first, key, "s1", "r1", None, now_ms())
        .await
        .unwrap();
    assert_eq!(taken.len(), 3);
    let second = {
        let pg = pg.clone();
        tokio::spawn(async move { pg.claim_inbox(key, "s1", "r2", Claim::All).await })
    };
    // Wait until the second claim waits for the first one's row locks.
    let mut watch = pg.pool.acquire().await.unwrap();
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(&mut *watch)
        .await
        .unwrap();
        if waiting > 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    first.commit().await.unwrap();
    let again = second.await.unwrap().unwrap();
    assert_eq!(again, Vec::new(), "the second claim finds nothing left");
    assert_eq!(pg.transcript("s1").await.unwrap().len(), 3);
}
