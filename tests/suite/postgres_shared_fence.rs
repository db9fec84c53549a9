//! Shared mode: a process whose `channel:telegram` lease was taken from under it (a pause
//! past its expiry, here the row rewritten in the database) stops polling at its next look
//! but goes on serving; an update it handled before noticing does not move the offset (the
//! write is fenced by the channel lease), and the next holder handles it no second time.

use std::time::Duration;

use serde_json::{json, Value};
use sqlx::{Connection as _, PgConnection, Row as _};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};
use switchboard_testkit::harness::GatewayBuilder;
use switchboard_testkit::pg::TestDb;

use crate::common::{get_json, BIN, WAIT};
use crate::postgres_shared::{ann, config, leases, wait_polled_by_again, TOKEN};

/// The stored Telegram offset.
async fn offset(c: &mut PgConnection) -> Option<String> {
    sqlx::query("SELECT value FROM channel_state WHERE channel = 'telegram' AND key = 'offset'")
        .fetch_optional(c)
        .await
        .unwrap()
        .map(|r| r.get(0))
}

/// Polls of `client` so far.
fn polls(tg: &FakeTelegram, client: &str) -> usize {
    tg.calls_to("getUpdates")
        .iter()
        .filter(|c| c.client.as_deref() == Some(client))
        .count()
}

/// Catches: an offset written under the process lease rather than the channel's (the stale
/// holder would move it past what the next holder has seen), a holder that keeps polling
/// after losing the channel, one that exits instead of going on serving, and an update
/// handled again by the next holder.
#[tokio::test]
async fn a_holder_that_lost_the_channel_stops_polling_and_moves_the_offset_no_more() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    // A 9 s lease, looked at every 3 s: time for the stale holder to handle an update.
    let mut cfg: Value = serde_json::from_str(&config(&fake, &tg, &db, "a", true)).unwrap();
    cfg["storage"]["leaseTimeout"] = json!("9s");
    let mut a = GatewayBuilder::new(BIN)
        .config(cfg.to_string())
        .start()
        .await
        .unwrap();
    tg.user_message(Chat::private(42), ann(), "before");
    tg.wait_for_sent(1, WAIT).await.unwrap();
    let mut c = PgConnection::connect(db.url()).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    let before = loop {
        if let Some(o) = offset(&mut c).await {
            break o;
        }
        assert!(tokio::time::Instant::now() < deadline, "no offset stored");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (a_owner, held) = leases(&a).await;
    let fence = held["channel:telegram"].1;

    let stolen = sqlx::query(
        "UPDATE leases SET owner = 'thief', fence = fence + 1,
                expires_at = switchboard_now_ms() + 600000 WHERE name = 'channel:telegram'",
    )
    .execute(&mut c)
    .await
    .unwrap();
    assert_eq!(stolen.rows_affected(), 1);
    let mark = a.log_mark();
    tg.user_message(Chat::private(42), ann(), "after the theft");
    a.wait_for_log_since(
        mark,
        "channel:telegram: the lease was taken by another process",
        WAIT,
    )
    .await
    .unwrap();
    let handled_by_stale = tg.sent_messages().len() == 2;
    println!("the stale holder handled an update after the theft: {handled_by_stale}");
    if handled_by_stale {
        assert!(a
            .stderr_lines()
            .iter()
            .any(|l| l.contains("the channel:telegram lease changed hands")));
    }
    assert_eq!(
        offset(&mut c).await,
        Some(before.clone()),
        "the offset stayed"
    );
    // A goes on serving, polling no more (the thief "polls").
    assert_eq!(get_json(&a, "/api/status").await["processes"], "shared");
    let polls_after_loss = polls(&tg, "a");

    // The thief lets go: A takes the channel again, from the stored offset.
    let released = std::time::Instant::now();
    sqlx::query("UPDATE leases SET expires_at = switchboard_now_ms() - 1 WHERE owner = 'thief'")
        .execute(&mut c)
        .await
        .unwrap();
    wait_polled_by_again(&tg, "a", polls_after_loss).await;
    let (_, held) = leases(&a).await;
    assert_eq!(held["channel:telegram"].0, a_owner);
    assert_eq!(
        held["channel:telegram"].1,
        fence + 2,
        "a new fence after the thief's"
    );
    let first_poll = tg
        .calls_to("getUpdates")
        .into_iter()
        .filter(|c| c.client.as_deref() == Some("a"))
        .nth(polls_after_loss)
        .unwrap();
    assert!(first_poll.at > released, "no poll while the thief held it");
    assert_eq!(
        first_poll.body["offset"].to_string(),
        before,
        "polls again from the stored offset"
    );
    tg.user_message(Chat::private(42), ann(), "later");
    tg.wait_for_sent(3, WAIT).await.unwrap();
    assert_eq!(a.terminate().await.unwrap().code(), Some(0));
    let answers: Vec<String> = tg.sent_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(
        answers,
        ["echo: before", "echo: after the theft", "echo: later"]
    );
    c.close().await.unwrap();
    tg.assert_no_violations();
}
