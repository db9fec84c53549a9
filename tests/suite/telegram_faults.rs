//! Telegram under faults, end to end: a poison message, a webhook update the gateway could
//! not take, a crash between the parts of a split message, per-chat order after a retry,
//! and an update whose handling never completes.

use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::fake_telegram::{Chat, Failure, FakeTelegram};

use crate::common::{get_text, WAIT};
use crate::faults_channels::sent_texts;
use crate::record::{db_exec, db_i64};
use crate::telegram::{ann, gateway, TOKEN};

/// Catches: cutting the original text at the mention's offset in `to_lowercase()` (`İ`
/// lowercases to 3 bytes): this update panicked the polling task, which then never polled
/// again, and the same update killed it again after every restart.
#[tokio::test]
async fn a_mention_after_a_dotted_capital_i_is_answered_and_polling_goes_on() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &tg, json!({})).await;
    tg.user_message(Chat::group(-4001, "team"), ann(), "İ @switchboard_bot");
    tg.user_message(Chat::private(42), ann(), "still polling?");
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    let mut texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    texts.sort();
    assert_eq!(texts, ["echo: still polling?", "echo: İ"]);
    tg.assert_no_violations();
}

/// Catches: the webhook answering 200 for an update the gateway did not take (here: its
/// attempt could not be recorded), so Telegram never delivers it again. It must answer a
/// 5xx, and 200 once a redelivery is taken; the message is answered once.
#[tokio::test]
async fn the_webhook_answers_503_until_the_update_is_taken() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &tg, json!({"mode": "webhook", "webhookUrl": "https://bot.example.invalid/telegram/webhook", "webhookSecret": "s3cret-token"})).await;
    tg.wait_for_call("setWebhook", 1, WAIT).await.unwrap();
    db_exec(
        &gw,
        "CREATE TRIGGER test_ledger_down BEFORE INSERT ON inbound_attempts
         BEGIN SELECT RAISE(ABORT, 'disk unavailable'); END",
    )
    .await;
    // The fake only lets the bot write to chats it has seen in an update.
    tg.push_update(json!({"message": {"message_id": 1, "date": 1_700_000_000, "chat": {"id": 42, "type": "private", "first_name": "Ann"}, "from": {"id": 42, "is_bot": false, "first_name": "Ann"}, "text": "(seen)"}}));
    let update = json!({"update_id": 5, "message": {"message_id": 11, "date": 1_700_000_000, "chat": {"id": 42, "type": "private", "first_name": "Ann"}, "from": {"id": 42, "is_bot": false, "first_name": "Ann", "username": "ann"}, "text": "via webhook"}});
    let post = || {
        gw.http()
            .post(format!("{}/telegram/webhook", gw.base_url()))
            .header("x-telegram-bot-api-secret-token", "s3cret-token")
            .json(&update)
            .send()
    };
    // 503 while the adapter sets the webhook up, then because the ledger fails: until the
    // daemon says why, bounded.
    let taken_log = "telegram: webhook update not taken";
    let mut tries = 0;
    while !gw.stderr_lines().iter().any(|l| l.contains(taken_log)) {
        assert_eq!(post().await.unwrap().status(), 503);
        tries += 1;
        assert!(
            tries < 400,
            "the daemon never reported the update as not taken"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(post().await.unwrap().status(), 503);
    assert_eq!(fake.request_count(), 0, "nothing reached an agent");
    db_exec(&gw, "DROP TRIGGER test_ledger_down").await;
    assert_eq!(post().await.unwrap().status(), 200);
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: via webhook");
    // Stored once, answered once (up to a graceful stop).
    assert_eq!(
        crate::telegram::user_texts(&gw, "agent:main:main").await,
        ["via webhook"]
    );
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(sent_texts(&tg), ["echo: via webhook"]);
}

/// Catches: the parts of a split message already delivered kept only in memory: after a
/// crash between two parts, the restarted daemon sent the first part again.
#[tokio::test]
async fn a_crash_between_parts_resumes_after_the_delivered_part() {
    let fake = FakeModel::start().await.unwrap();
    let first = "first part ".repeat(5).trim().to_string();
    let second = "second part ".repeat(5).trim().to_string();
    fake.push_for("split me", Step::Text(format!("{first}\n\n{second}")));
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    // Part one goes through; part two hangs until the daemon is killed.
    tg.fail_after("sendMessage", 1, Failure::Hang);
    let mut gw = gateway(&fake, &tg, json!({"textChunkLimit": 64})).await;
    tg.user_message(Chat::private(42), ann(), "split me");
    tg.wait_for_call("sendMessage", 2, WAIT).await.unwrap();
    assert_eq!(sent_texts(&tg), [first.as_str()]);
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();
    tg.wait_for_sent(2, WAIT).await.unwrap();
    crate::common::wait_outbox_sent(&gw, 1).await;
    gw.terminate().await.unwrap();
    assert_eq!(sent_texts(&tg), [first.as_str(), second.as_str()]);
    let (state, parts) = (
        db_i64(
            &gw,
            "SELECT state = 'sent' FROM outbox WHERE key LIKE 'run:%'",
        )
        .await,
        db_i64(&gw, "SELECT parts_sent FROM outbox WHERE key LIKE 'run:%'").await,
    );
    assert_eq!((state, parts), (1, 1));
    tg.assert_no_violations();
}

/// Catches: a chat's later reply sent while its earlier reply waits out a retry: the
/// earlier one (rate limited three times) landed after the later one.
#[tokio::test]
async fn a_retried_reply_keeps_its_place_in_the_chat() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    // Three 429s: the adapter waits out two, then hands the message back to the outbox.
    for _ in 0..3 {
        tg.fail_next("sendMessage", Failure::TooManyRequests { retry_after: 1 });
    }
    let mut gw = crate::common::start(
        &fake,
        json!({
            "messages": {"queue": {"mode": "followup"}},
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": ["42"], "pollTimeoutSeconds": 1}}
        }),
    )
    .await;
    tg.user_message(Chat::private(42), ann(), "first");
    tg.user_message(Chat::private(42), ann(), "second");
    tg.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(sent_texts(&tg), ["echo: first", "echo: second"]);
    assert_eq!(
        tg.calls_to("sendMessage").len(),
        5,
        "3 refused, 2 delivered"
    );
    crate::common::wait_outbox_sent(&gw, 2).await;
    gw.terminate().await.unwrap();
    assert_eq!(
        db_i64(&gw, "SELECT attempts FROM outbox ORDER BY id LIMIT 1").await,
        2,
        "the first reply went back to the outbox once"
    );
    assert_eq!(
        db_i64(
            &gw,
            "SELECT attempts FROM outbox ORDER BY id LIMIT 1 OFFSET 1"
        )
        .await,
        1
    );
}

/// Catches: attempts at an update not counted durably before it is handled: an update
/// whose handling never completes (here the daemon dies while storing it, three times) was
/// fetched and handled again after every restart, forever. The fourth time it is recorded
/// as poisoned without being handled, skipped and counted, and polling goes on.
#[tokio::test]
async fn an_update_that_never_completes_is_poisoned_after_three_attempts() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &tg, json!({})).await;
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    // Storing the message "poison" takes minutes (a join over a million-row table), so
    // the daemon is always killed while handling it.
    db_exec(
        &gw,
        "CREATE TABLE test_slow AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000) SELECT x FROM n",
    )
    .await;
    db_exec(
        &gw,
        "CREATE TRIGGER test_slow_poison BEFORE INSERT ON inbox WHEN NEW.text = 'poison'
         BEGIN SELECT count(*) FROM test_slow a, test_slow b, test_slow c; END",
    )
    .await;
    let poison = tg.user_message(Chat::private(42), ann(), "poison");
    let attempts = format!(
        "SELECT COALESCE((SELECT attempts FROM inbound_attempts WHERE update_id = {poison}), 0)"
    );
    for attempt in 1..=3 {
        crate::record::wait_db_i64(&gw, &attempts, attempt).await;
        gw.kill().await.unwrap();
        gw.restart().await.unwrap();
    }
    tg.user_message(Chat::private(42), ann(), "fine");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: fine");
    gw.wait_for_log("telegram: update recorded as poisoned and skipped", WAIT)
        .await
        .unwrap();
    let metrics = get_text(&gw, "/metrics").await;
    assert!(
        metrics.contains("switchboard_channel_poisoned_updates_total{channel=\"telegram\"} 1"),
        "{metrics}"
    );
    assert_eq!(fake.request_count(), 1, "the poison never reached a model");
    gw.terminate().await.unwrap();
    let recorded = db_i64(
        &gw,
        &format!("SELECT attempts FROM inbound_poisoned WHERE channel = 'telegram' AND update_id = {poison}"),
    )
    .await;
    assert_eq!(recorded, 3);
    assert_eq!(
        db_i64(&gw, &attempts).await,
        0,
        "its attempts are forgotten"
    );
    assert_eq!(tg.pending_updates(), 0, "the offset moved past it");
}
