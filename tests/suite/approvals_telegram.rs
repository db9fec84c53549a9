//! Exec approvals through Telegram's inline keyboard: the request carries allow/deny
//! buttons (`reply_markup`), a press arrives as a `callback_query` update, is answered with
//! `answerCallbackQuery` and turns the message into its outcome (`editMessageText`, the
//! keyboard gone); a stranger's press is refused with an alert and changes nothing; a
//! redelivered press does nothing twice; a press after a restart works.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, SentMessage, User};
use switchboard_testkit::harness::Gateway;

use crate::common::{start, WAIT};
use crate::telegram::{ann, TOKEN};
use crate::tools_support::{json as parse, script, tool_result, workspace};

const GROUP: i64 = -100_555;

fn stranger() -> User {
    User::new(77, "eve", "Eve")
}

/// Telegram (Ann's DM, and groups where only Ann may write); only `true` runs unasked.
async fn gateway(fake: &FakeModel, tg: &FakeTelegram) -> Gateway {
    let telegram = json!({"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
        "allowFrom": ["42"], "groups": {"*": {}}, "pollTimeoutSeconds": 1});
    let patch: Value = json!({
        "gateway": {"shutdownGrace": "300ms"},
        "channels": {"telegram": telegram},
        "tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}},
    });
    start(fake, patch).await
}

/// Wait for the approval request sent to the group; returns its id and the message.
async fn request(tg: &FakeTelegram) -> (String, SentMessage) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(m) = tg
            .sent_messages()
            .into_iter()
            .find(|m| m.plain_text.starts_with("🔐 Approval needed ["))
        {
            let id = m.plain_text["🔐 Approval needed [".len()..]
                .split(']')
                .next()
                .unwrap_or_default()
                .to_string();
            return (id, m);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no approval request; sent: {:?}",
            tg.sent_messages()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Wait until a message with exactly `text` was sent.
async fn wait_sent_text(tg: &FakeTelegram, text: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !tg.sent_messages().iter().any(|m| m.plain_text == text) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited for {text:?}; sent: {:?}",
            tg.sent_messages()
                .iter()
                .map(|m| m.plain_text.clone())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn group() -> Chat {
    Chat::supergroup(GROUP, "ops")
}

/// The request shows three buttons; a stranger's press gets an alert and changes nothing;
/// Ann's "allow once" runs the command, answers the callback and edits the message to the
/// outcome without its keyboard; the same press delivered again does nothing twice.
/// Catches: no buttons on Telegram, `callback_query` not asked for, a stranger approving,
/// a press not answered (the client spins), a redelivered press acting twice.
#[tokio::test]
async fn a_button_press_approves_and_a_stranger_s_press_is_refused() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let gw = gateway(&fake, &tg).await;
    script(
        &fake,
        "tg1",
        "exec",
        &json!({"command": "touch pressed.txt"}).to_string(),
    );
    tg.user_message(group(), ann(), "@switchboard_bot tg1");
    let (id, req) = request(&tg).await;
    let buttons = req.buttons();
    assert_eq!(
        buttons
            .iter()
            .map(|(_, data)| data.as_str())
            .collect::<Vec<_>>(),
        vec![
            format!("approve:{id}:allow-once"),
            format!("approve:{id}:allow-always"),
            format!("approve:{id}:deny"),
        ],
        "{buttons:?}"
    );
    let allow = format!("approve:{id}:allow-once");

    tg.press_button(group(), stranger(), req.message_id, &allow)
        .unwrap();
    let answers = tg.wait_for_callback_answers(1, WAIT).await.unwrap();
    assert!(answers[0].show_alert, "{answers:?}");
    assert_eq!(
        answers[0].text.as_deref(),
        Some("You are not allowed to answer this request.")
    );
    assert!(tg.edits().is_empty(), "a refused press edits nothing");
    assert!(!workspace(&gw).join("pressed.txt").exists());

    let query = tg
        .press_button(group(), ann(), req.message_id, &allow)
        .unwrap();
    let answers = tg.wait_for_callback_answers(2, WAIT).await.unwrap();
    assert!(!answers[1].show_alert, "{answers:?}");
    assert_eq!(
        answers[1].text.as_deref(),
        Some(format!("✅ Approved {id} once: the command runs now.").as_str())
    );
    wait_sent_text(&tg, "done tg1").await;
    assert!(workspace(&gw).join("pressed.txt").exists());
    let r = parse(&tool_result(&fake, "tg1"));
    assert_eq!(r["exitCode"], 0, "{r}");
    let edits = tg.edits();
    assert_eq!(edits.len(), 1, "{edits:?}");
    assert_eq!(edits[0].message_id, req.message_id);
    assert!(
        edits[0]
            .plain_text
            .starts_with(&format!("🔐 Approval [{id}]: ✅ allowed once by @ann")),
        "{edits:?}"
    );
    assert_eq!(edits[0].reply_markup, None, "the keyboard is gone");

    // Telegram delivers the same query again: nothing happens twice.
    let before = fake.request_count();
    tg.press_button_again(group(), ann(), req.message_id, &allow, &query)
        .unwrap_err(); // the edited message has no buttons any more…
                       // …so redeliver the raw update as Telegram would have queued it before the edit.
    let redelivered = json!({"callback_query": {
        "id": query, "from": {"id": 42, "is_bot": false, "first_name": "Ann", "username": "ann"},
        "message": {"message_id": req.message_id, "date": 1_700_000_000, "chat": {"id": GROUP, "type": "supergroup", "title": "ops"},
                    "from": {"id": 1000, "is_bot": true, "first_name": "Switchboard", "username": "switchboard_bot"}, "text": "x"},
        "chat_instance": "ci1", "data": allow,
    }});
    tg.push_update(redelivered);
    tg.wait_for_call("answerCallbackQuery", 3, WAIT)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(tg.edits().len(), 1, "no second edit");
    assert_eq!(fake.request_count(), before, "no second run of anything");
    tg.assert_no_violations();
    fake.assert_no_violations();
}

/// A restart while the request waits: the same message's button works afterwards.
/// Catches: a press after a restart finding nothing (the request or its buttons lost).
#[tokio::test]
async fn a_press_after_a_restart_works() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &tg).await;
    script(
        &fake,
        "tg2",
        "exec",
        &json!({"command": "touch restarted.txt"}).to_string(),
    );
    tg.user_message(Chat::private(42), ann(), "tg2");
    let (id, req) = request(&tg).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    gw.restart().await.unwrap();
    tg.press_button(
        Chat::private(42),
        ann(),
        req.message_id,
        &format!("approve:{id}:allow-once"),
    )
    .unwrap();
    wait_sent_text(&tg, "done tg2").await;
    assert!(workspace(&gw).join("restarted.txt").exists());
    let requests = tg
        .sent_messages()
        .iter()
        .filter(|m| m.plain_text.starts_with("🔐 Approval needed"))
        .count();
    assert_eq!(requests, 1, "the request was not posted again");
    tg.assert_no_violations();
    fake.assert_no_violations();
}

/// Webhook mode asks Telegram for button presses too (`allowed_updates` of `setWebhook`).
/// Catches: a webhook that never receives `callback_query` updates.
#[tokio::test]
async fn the_webhook_asks_for_button_presses() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let _gw = crate::telegram::gateway(
        &fake,
        &tg,
        json!({"mode": "webhook", "webhookUrl": "https://bot.example.invalid/telegram/webhook", "webhookSecret": "s3cret-token"}),
    )
    .await;
    tg.wait_for_call("setWebhook", 1, WAIT).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    let hook = loop {
        if let Some(h) = tg.webhook() {
            break h;
        }
        assert!(tokio::time::Instant::now() < deadline, "no webhook set");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let kinds = hook.allowed_updates.unwrap_or_default();
    assert!(
        kinds.iter().any(|k| k == "message") && kinds.iter().any(|k| k == "callback_query"),
        "{kinds:?}"
    );
}
