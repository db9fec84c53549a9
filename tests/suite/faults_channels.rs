//! Channel faults during a burst: 50 messages from five chats while the fake Telegram
//! answers 429s, 5xx and dropped connections on both polling and sending. Every reply is
//! delivered exactly once and in order per chat, checked against the fake's full send log
//! once the daemon has stopped and against the outbox rows.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, Failure, FakeTelegram, User};

use crate::record::db_i64;
use crate::telegram::TOKEN;

/// The texts the fake Telegram recorded as sent, in order.
pub(crate) fn sent_texts(tg: &FakeTelegram) -> Vec<String> {
    tg.sent_messages().into_iter().map(|m| m.text).collect()
}

const CHATS: i64 = 5;
const PER_CHAT: usize = 10;

/// Catches: replies lost, sent twice or out of order in a chat when the platform fails
/// (rate limits, 5xx, cut connections) while many chats are busy: a reply re-sent after an
/// error the platform had not accepted, a later reply overtaking a retried one, an update
/// skipped or handled twice after a failed poll.
#[tokio::test]
async fn a_burst_under_channel_faults_is_delivered_once_in_order() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    // Polling: a 502, a 429 and a cut connection among the first polls.
    tg.fail_after("getUpdates", 1, Failure::ServerError(502));
    tg.fail_after("getUpdates", 2, Failure::TooManyRequests { retry_after: 1 });
    tg.fail_after("getUpdates", 2, Failure::Drop);
    // Sending: scattered 429s, 5xx and cut connections, and a run of three cut connections
    // that outlasts the adapter's own retries and goes back to the outbox.
    for (pass, failure) in [
        (3, Failure::TooManyRequests { retry_after: 1 }),
        (4, Failure::ServerError(500)),
        (2, Failure::Drop),
        (5, Failure::ServerError(502)),
        (4, Failure::Drop),
        (0, Failure::Drop),
        (0, Failure::Drop),
        (6, Failure::TooManyRequests { retry_after: 1 }),
        (3, Failure::ServerError(503)),
    ] {
        tg.fail_after("sendMessage", pass, failure);
    }
    let mut gw = crate::common::start(
        &fake,
        json!({
            "messages": {"queue": {"mode": "followup"}},
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
                "allowFrom": ["42"], "groups": {"*": {}}, "pollTimeoutSeconds": 1}}
        }),
    )
    .await;
    let ann = User::new(42, "ann", "Ann");
    for i in 0..PER_CHAT {
        for c in 0..CHATS {
            let chat = Chat::group(-4000 - c, "team");
            tg.user_message(chat, ann.clone(), &format!("@switchboard_bot c{c} m{i}"));
        }
    }
    let total = CHATS as usize * PER_CHAT;
    tg.wait_for_sent(total, Duration::from_secs(45))
        .await
        .unwrap();
    crate::common::wait_outbox_sent(&gw, total as u64).await;
    gw.terminate().await.unwrap();

    // The fake's whole send log, after the daemon stopped: each chat's replies once, in order.
    let mut by_chat: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for m in tg.sent_messages() {
        by_chat.entry(m.chat_id).or_default().push(m.text);
    }
    for c in 0..CHATS {
        let want: Vec<String> = (0..PER_CHAT).map(|i| format!("echo: c{c} m{i}")).collect();
        assert_eq!(by_chat.remove(&(-4000 - c)), Some(want), "chat {c}");
    }
    assert!(by_chat.is_empty(), "replies to other chats: {by_chat:?}");
    // The outbox agrees: every reply sent, each after as many attempts as failures hit it.
    let rows = db_i64(&gw, "SELECT COUNT(*) FROM outbox WHERE key LIKE 'run:%'").await;
    let sent = db_i64(
        &gw,
        "SELECT COUNT(*) FROM outbox WHERE key LIKE 'run:%' AND state = 'sent'",
    )
    .await;
    let least = db_i64(&gw, "SELECT MIN(attempts) FROM outbox").await;
    let most = db_i64(&gw, "SELECT MAX(attempts) FROM outbox").await;
    assert_eq!((rows, sent), (total as i64, total as i64));
    // Nine scripted send failures, three tries per attempt: at most three attempts fail.
    assert!(
        least >= 1 && most <= 4,
        "attempts per reply between {least} and {most}"
    );
    assert_eq!(tg.pending_updates(), 0, "every update confirmed");
    assert_eq!(
        fake.request_count(),
        total,
        "each message reached the model once"
    );
    tg.assert_no_violations();
}
