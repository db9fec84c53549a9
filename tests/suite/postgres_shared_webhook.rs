//! Shared mode and Telegram's webhook: the holder of `channel:telegram` registers the
//! webhook; every process takes webhook calls (a load balancer may send them to any), each
//! update stored and answered once whichever process gets it, and twice delivered.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::FakeTelegram;
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

use crate::common::WAIT;
use crate::postgres_shared::{config, TOKEN};

const SECRET: &str = "s3cret-token";

async fn start(fake: &FakeModel, tg: &FakeTelegram, db: &TestDb, client: &str) -> Gateway {
    let mut cfg: Value = serde_json::from_str(&config(fake, tg, db, client, true)).unwrap();
    cfg["channels"]["telegram"]["mode"] = json!("webhook");
    cfg["channels"]["telegram"]["webhookUrl"] =
        json!("https://bot.example.invalid/telegram/webhook");
    cfg["channels"]["telegram"]["webhookSecret"] = json!(SECRET);
    GatewayBuilder::new(crate::common::BIN)
        .config(cfg.to_string())
        .start()
        .await
        .unwrap()
}

/// Posts `update` to `gw`'s webhook route; the HTTP status.
async fn deliver(gw: &Gateway, update: &Value) -> u16 {
    gw.http()
        .post(format!("{}/telegram/webhook", gw.base_url()))
        .header("x-telegram-bot-api-secret-token", SECRET)
        .json(update)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn update(id: i64, text: &str) -> Value {
    json!({"update_id": id, "message": {"message_id": id, "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
        "from": {"id": 42, "is_bot": false, "first_name": "Ann", "username": "ann"},
        "text": text}})
}

/// Catches: a process that does not hold the channel answering Telegram's webhook calls
/// 503 (half the updates delayed behind a load balancer), both processes registering the
/// webhook, and an update delivered to both processes handled twice.
#[tokio::test]
async fn every_process_takes_webhook_calls_and_one_registers_the_webhook() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut a = start(&fake, &tg, &db, "a").await;
    tg.wait_for_call("setWebhook", 1, WAIT).await.unwrap();
    let mut b = start(&fake, &tg, &db, "b").await;
    // The fake lets the bot write only to chats it has seen in an update.
    tg.push_update(json!({"message": {"message_id": 1, "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
        "from": {"id": 42, "is_bot": false, "first_name": "Ann"}, "text": "(seen)"}}));

    // B does not hold the channel; it takes the call all the same.
    assert_eq!(deliver(&b, &update(10, "to B")).await, 200);
    assert_eq!(deliver(&a, &update(11, "to A")).await, 200);
    // Telegram delivers one update again, to the other process: stored once.
    assert_eq!(deliver(&a, &update(10, "to B")).await, 200);
    tg.wait_for_sent(2, WAIT).await.unwrap();

    assert_eq!(b.terminate().await.unwrap().code(), Some(0));
    assert_eq!(a.terminate().await.unwrap().code(), Some(0));
    let mut answers: Vec<String> = tg.sent_messages().into_iter().map(|m| m.text).collect();
    answers.sort();
    assert_eq!(answers, ["echo: to A", "echo: to B"]);
    let registered_by: Vec<Option<String>> = tg
        .calls_to("setWebhook")
        .into_iter()
        .map(|c| c.client)
        .collect();
    assert!(
        registered_by.iter().all(|c| c.as_deref() == Some("a")),
        "only the holder registers: {registered_by:?}"
    );
    tg.assert_no_violations();
}
