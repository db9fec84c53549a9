//! Shared mode and cron: a job added through the process that does not run the scheduler,
//! due while the scheduler's holder is being replaced (SIGKILLed), runs exactly once, in
//! the process that takes the `cron` lease over.

use std::time::{Duration, Instant};

use serde_json::json;
use sqlx::{Connection as _, PgConnection, Row as _};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

use crate::common::{config_for, BIN, WAIT};
use crate::postgres_shared::leases;

async fn start(fake: &FakeModel, db: &TestDb) -> Gateway {
    let cfg = config_for(
        fake,
        json!({"storage": {"url": db.url(), "leaseTimeout": "2s", "processes": "shared"}}),
    );
    GatewayBuilder::new(BIN).config(cfg).start().await.unwrap()
}

/// (runs, enabled) of job `id`, and how many times its message reached a transcript.
async fn fired(c: &mut PgConnection, id: &str, text: &str) -> (i64, bool, i64) {
    let job = sqlx::query("SELECT runs, enabled FROM cron_jobs WHERE id = $1")
        .bind(id)
        .fetch_one(&mut *c)
        .await
        .unwrap();
    let stored: i64 = sqlx::query(
        "SELECT count(*) FROM messages WHERE role = 'user' AND position($1 IN content) > 0",
    )
    .bind(text)
    .fetch_one(&mut *c)
    .await
    .unwrap()
    .get(0);
    (job.get(0), job.get(1), stored)
}

/// Catches: a `cron` lease that is never taken over after a kill (the job never fires), a
/// job added through a process that does not run the scheduler being lost, and a due time
/// fired twice across the handover. (Two schedulers racing on one due time are
/// `store::tests::engines::one_due_time_fired_by_two_stores_at_once_fires_once`.)
#[tokio::test]
async fn a_job_due_while_the_cron_holder_is_replaced_runs_once() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let mut a = start(&fake, &db).await;
    let mut b = start(&fake, &db).await;
    let (a_owner, held) = leases(&a).await;
    assert_eq!(held["cron"].0, a_owner, "the first process runs cron");

    // Added through B, due in two seconds; A, its scheduler's holder, is killed at once.
    let due = jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2);
    let text = "the handover job";
    let job = json!({"id": "handover", "schedule": {"at": due.to_string()}, "message": text});
    let added = b
        .http()
        .post(format!("{}/api/cron", b.base_url()))
        .json(&job)
        .send()
        .await
        .unwrap();
    assert_eq!(added.status().as_u16(), 201);
    a.kill().await.unwrap();

    let mut c = PgConnection::connect(db.url()).await.unwrap();
    let deadline = Instant::now() + WAIT;
    while fired(&mut c, "handover", text).await.2 < 1 {
        assert!(Instant::now() < deadline, "the job never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (b_owner, held) = leases(&b).await;
    assert_eq!(held["cron"].0, b_owner, "B took cron over");
    assert_eq!(b.terminate().await.unwrap().code(), Some(0));
    assert_eq!(
        fired(&mut c, "handover", text).await,
        (1, false, 1),
        "ran once; a one-shot is then disabled"
    );
    c.close().await.unwrap();
    fake.assert_no_violations();
}
