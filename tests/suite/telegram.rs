//! Telegram end to end: the real binary's teloxide adapter against the fake Bot API.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::fake_telegram::{Chat, Failure, FakeTelegram, User};
use switchboard_testkit::harness::Gateway;

use crate::common::{start, WAIT};
use crate::faults_channels::sent_texts;
use crate::record::resent_rows;
use crate::subagents::spawn_call;

pub(crate) const TOKEN: &str = "123456:TEST-token";

pub(crate) fn ann() -> User {
    User::new(42, "ann", "Ann")
}

pub(crate) async fn gateway(fake: &FakeModel, tg: &FakeTelegram, telegram: Value) -> Gateway {
    let mut t = json!({"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": ["42"], "groups": {"*": {}}, "pollTimeoutSeconds": 1});
    crate::common::merge(&mut t, &telegram);
    start(fake, json!({"channels": {"telegram": t}})).await
}

#[tokio::test]
async fn dms_and_forum_topics_get_their_replies_in_place() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &tg, json!({})).await;
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    assert_eq!(
        tg.commands()
            .iter()
            .map(|c| c.0.as_str())
            .collect::<Vec<_>>(),
        vec!["subagents", "stop", "status", "new", "help", "compact"]
    );

    // The first answer waits until the chat shows "typing…" (an instant answer may end
    // the run before its typing task has sent anything, which is right: nothing to show).
    let typing_seen = Gate::new();
    fake.push_for(
        "hello bot",
        Step::gated(&typing_seen, Step::text("echo: hello bot")),
    );
    tg.user_message(Chat::private(42), ann(), "hello bot");
    tg.wait_for_call("sendChatAction", 1, WAIT).await.unwrap();
    typing_seen.open();
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        (sent[0].chat_id, sent[0].thread_id, sent[0].text.as_str()),
        (42, None, "echo: hello bot")
    );

    tg.user_message(
        Chat::forum_topic(-100_777, 9),
        ann(),
        "@switchboard_bot in the topic",
    );
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(
        (sent[1].chat_id, sent[1].thread_id, sent[1].text.as_str()),
        (-100_777, Some(9), "echo: in the topic")
    );
    // Not addressed in a group: ignored.
    tg.user_message(Chat::forum_topic(-100_777, 9), ann(), "just chatting");
    tg.user_message(Chat::private(42), ann(), "**bold** & more");
    let sent = tg.wait_for_sent(3, WAIT).await.unwrap();
    assert_eq!(sent[2].text, "echo: <b>bold</b> &amp; more");
    assert_eq!(sent[2].parse_mode.as_deref(), Some("HTML"));
    assert_eq!(
        fake.request_count(),
        3,
        "the unaddressed group message reached no agent"
    );
    assert!(tg
        .chat_actions()
        .iter()
        .any(|(chat, action)| *chat == 42 && action == "typing"));
    tg.assert_no_violations();
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_spawn_announces_in_the_topic_and_commands_work_from_telegram() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "research",
        Step::ToolCalls(vec![spawn_call("look into it", json!({"label": "probe"}))]),
    );
    fake.push_for("research", Step::Text("on it".into()));
    fake.push_for(
        "Your task has ended",
        Step::Text(format!("{}\n\nDone.", "finding ".repeat(600))),
    );
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let _gw = gateway(&fake, &tg, json!({})).await;
    let topic = Chat::forum_topic(-100_555, 4);
    tg.user_message(topic.clone(), ann(), "@switchboard_bot research this");
    // "on it" and the announce (in either order): a 5000+ character Result split in two,
    // Stats line last and whole.
    let mut sent = tg.wait_for_sent(3, WAIT).await.unwrap();
    assert!(
        sent.iter()
            .all(|m| m.chat_id == -100_555 && m.thread_id == Some(4)),
        "{sent:?}"
    );
    let reply = sent.iter().position(|m| m.text == "on it").unwrap();
    sent.remove(reply);
    assert!(
        sent[0]
            .plain_text
            .starts_with("Status: success\nResult: finding"),
        "{}",
        sent[0].plain_text
    );
    let last = sent[1].plain_text.lines().last().unwrap();
    assert!(
        last.starts_with("Stats: runtime ")
            && last.contains(" • sessionKey agent:main:subagent:")
            && last.contains("/transcript?sessionId="),
        "{last}"
    );
    assert!(
        sent[0].plain_text.chars().count() <= 4096 && sent[1].plain_text.chars().count() <= 4096
    );

    tg.user_message(topic.clone(), ann(), "/subagents@switchboard_bot list");
    let sent = tg.wait_for_sent(4, WAIT).await.unwrap();
    assert!(
        sent[3]
            .plain_text
            .starts_with("Sub-agents: 0 active, 1 done\n1. success · probe · "),
        "{}",
        sent[3].plain_text
    );
    tg.user_message(topic.clone(), ann(), "/subagents info 1");
    let sent = tg.wait_for_sent(5, WAIT).await.unwrap();
    assert!(
        sent[4].plain_text.contains("Label: probe")
            && sent[4].plain_text.contains("Announce: queued"),
        "{}",
        sent[4].plain_text
    );
    tg.user_message(topic, ann(), "/stop");
    let sent = tg.wait_for_sent(6, WAIT).await.unwrap();
    assert_eq!(sent[5].plain_text, "Nothing to stop.");
    tg.assert_no_violations();
}

/// A 429 on `sendMessage` is waited out (`retry_after`) and the message sent once, within
/// the outbox's first attempt. (Catches: the 429 not waited for, or the part sent again.)
#[tokio::test]
async fn a_429_on_send_message_is_waited_out_and_delivered_once() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    tg.fail_next("sendMessage", Failure::TooManyRequests { retry_after: 1 });
    let mut gw = gateway(&fake, &tg, json!({})).await;
    tg.user_message(Chat::private(42), ann(), "rate me");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: rate me");
    let calls = tg.calls_to("sendMessage");
    assert_eq!(calls.len(), 2, "one refused, one delivered");
    assert!(calls[1].at.duration_since(calls[0].at) >= Duration::from_millis(950));
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(sent_texts(&tg), ["echo: rate me"], "delivered once");
    assert_eq!(crate::record::sent_once(&gw).await, ["echo: rate me"]);
}

#[tokio::test]
async fn rejected_html_falls_back_to_plain_text() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    tg.fail_next(
        "sendMessage",
        Failure::BadRequest("Bad Request: can't parse entities: unsupported start tag".into()),
    );
    let _gw = gateway(&fake, &tg, json!({})).await;
    tg.user_message(Chat::private(42), ann(), "*styled*");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        (sent[0].text.as_str(), sent[0].parse_mode.as_deref()),
        ("echo: *styled*", None)
    );
}

#[tokio::test]
async fn a_restart_mid_stream_neither_repeats_nor_skips_updates() {
    let fake = FakeModel::start().await.unwrap();
    for i in 0..10 {
        fake.push_for(
            &format!("update {i}"),
            Step::Delay(
                Duration::from_millis(60),
                Box::new(Step::Text(format!("reply {i}"))),
            ),
        );
    }
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    // One turn per message (followup mode), so every update has exactly one reply.
    let mut gw = start(
        &fake,
        json!({
            "messages": {"queue": {"mode": "followup"}},
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": ["42"], "pollTimeoutSeconds": 1}}
        }),
    )
    .await;
    let first = (0..10)
        .map(|i| tg.user_message(Chat::private(42), ann(), &format!("update {i}")))
        .min()
        .unwrap();
    tg.wait_for_sent(3, WAIT).await.unwrap();
    // Kill once those replies are recorded as sent (a kill between Telegram accepting a
    // message and that commit is the outbound at-least-once window, not what this tests).
    crate::common::wait_outbox_sent(&gw, 3).await;
    gw.kill().await.unwrap();
    let polls_before = tg.offsets().len();
    gw.restart().await.unwrap();
    tg.wait_for_sent(10, Duration::from_secs(30)).await.unwrap();
    crate::common::wait_outbox_sent(&gw, 10).await;
    // Each update is in the session's transcript exactly once: none processed twice.
    let transcript = crate::common::get_text(&gw, "/api/sessions/agent:main:main/transcript").await;
    let users: Vec<String> = transcript
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        users,
        (0..10).map(|i| format!("update {i}")).collect::<Vec<_>>()
    );
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    // The restarted daemon polled from the offset it had stored, never from scratch.
    // (Catches: `offsets.save` dropped; the inbound-id dedupe hides it from the replies.)
    let after_restart = tg.offsets().split_off(polls_before);
    assert!(
        !after_restart.is_empty() && after_restart.iter().all(|o| o.is_some_and(|o| o > first)),
        "polls after the restart asked for {after_restart:?} (updates from {first})"
    );
    // The full send log: each update's reply; a repeat only for a reply the kill cut
    // between Telegram accepting it and the outbox recording it (logged at start).
    let sent = tg.sent_messages();
    let resent = resent_rows(&gw);
    assert!(
        sent.len() >= 10 && sent.len() - 10 <= resent,
        "{} sent, {resent} re-sent: {sent:?}",
        sent.len()
    );
    // An update whose model call was cut by the kill is answered by the resumed run; its
    // scripted reply went to the dropped call, so the fake echoes instead.
    let mut texts: Vec<String> = sent
        .iter()
        .map(|m| m.text.replace("echo: update ", "reply "))
        .collect();
    texts.sort();
    texts.dedup();
    let mut want: Vec<String> = (0..10).map(|i| format!("reply {i}")).collect();
    want.sort();
    assert_eq!(texts, want);
    assert_eq!(tg.pending_updates(), 0, "every update was confirmed");
}

/// Wait (bounded) until the fake has no update the daemon has not confirmed: every update
/// pushed so far was taken (or dropped) by the gateway.
pub(crate) async fn wait_all_confirmed(tg: &FakeTelegram) {
    for _ in 0..800 {
        if tg.pending_updates() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} updates were never confirmed", tg.pending_updates());
}

/// An unknown DM sender gets one pairing code and nothing else — not a command's answer,
/// not for a second message, and nothing reaches an agent — until `switchboard pairing
/// approve`; then they are served. Checked against the full send log after a graceful stop and the model's requests.
/// (Catches: a second code or a reply to a stranger; an approval that does not let them in.)
#[tokio::test]
async fn strangers_are_ignored_and_pairing_lets_them_in() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &tg, json!({"dmPolicy": "pairing"})).await;
    let bob = User::new(77, "bob", "Bob");
    // A stranger's command is not answered either: the answer is the pairing code.
    tg.user_message(Chat::private(77), bob.clone(), "/status");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    let text = &sent[0].plain_text;
    assert!(text.contains("Your pairing code is "), "{text}");
    assert!(!text.contains("Model:"), "{text}");
    let code = text
        .split("Your pairing code is ")
        .nth(1)
        .unwrap()
        .split('.')
        .next()
        .unwrap()
        .to_string();
    tg.user_message(Chat::private(77), bob.clone(), "hello?");
    // Decided (and confirmed) before the approval.
    wait_all_confirmed(&tg).await;

    let out = crate::common::output(
        gw.command()
            .args(["pairing", "approve", "telegram", &code, "--config"])
            .arg(gw.config_path()),
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tg.user_message(Chat::private(77), bob, "now?");
    tg.wait_for_sent(2, WAIT).await.unwrap();
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    let sent = tg.sent_messages();
    assert_eq!(sent.len(), 2, "one code, one reply: {sent:?}");
    assert_eq!(sent[1].text, "echo: now?");
    assert_eq!(
        fake.request_count(),
        1,
        "only the approved message reached an agent"
    );
}

/// With `dmPolicy: "allowlist"` a stranger gets nothing, in a DM or a group; checked against
/// the full send log after a graceful stop. (Catches: a pairing code or a reply sent to a
/// stranger under allowlist.)
#[tokio::test]
async fn allowlist_mode_ignores_strangers_entirely() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &tg, json!({"dmPolicy": "allowlist"})).await;
    tg.user_message(Chat::private(66), User::new(66, "eve", "Eve"), "hi");
    tg.user_message(
        Chat::group(-5, "team"),
        User::new(66, "eve", "Eve"),
        "@switchboard_bot hi",
    );
    tg.user_message(Chat::private(42), ann(), "I am allowed");
    tg.wait_for_sent(1, WAIT).await.unwrap();
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(sent_texts(&tg), ["echo: I am allowed"]);
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_stalled_poll_is_restarted_and_a_conflict_backs_off() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    tg.fail_next("getUpdates", Failure::Conflict);
    tg.fail_next("getUpdates", Failure::Stall(Duration::from_secs(60)));
    let gw = gateway(&fake, &tg, json!({})).await;
    gw.wait_for_log(
        "409 Conflict: another process is polling this bot token",
        WAIT,
    )
    .await
    .unwrap();
    gw.wait_for_log(
        "getUpdates stalled past its timeout; restarting polling",
        WAIT,
    )
    .await
    .unwrap();
    tg.user_message(Chat::private(42), ann(), "still there?");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: still there?");
}

/// Network errors and 5xx on `sendMessage` are retried: past the adapter's own three tries
/// the message goes back to the outbox, whose next attempt delivers it, once. Checked
/// against the outbox row and the fake's full send log after a graceful stop. (Catches: a
/// failed send marked `failed` instead of retried, or a retry that sends the message
/// twice; the old version of this test never left the adapter's own retries.)
#[tokio::test]
async fn network_errors_on_send_are_retried_through_the_outbox() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    // Three failures: the adapter's three tries of the first attempt.
    tg.fail_next("sendMessage", Failure::Drop);
    tg.fail_next("sendMessage", Failure::ServerError(502));
    tg.fail_next("sendMessage", Failure::Drop);
    let mut gw = gateway(&fake, &tg, json!({})).await;
    tg.user_message(Chat::private(42), ann(), "flaky network");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: flaky network");
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(sent_texts(&tg), ["echo: flaky network"], "delivered once");
    assert_eq!(tg.calls_to("sendMessage").len(), 4);
    let rows = crate::record::outbox(&gw).await;
    assert_eq!(
        rows.iter()
            .map(|r| (r.state.as_str(), r.attempts))
            .collect::<Vec<_>>(),
        [("sent", 2)],
        "the second outbox attempt delivered it"
    );
}

#[tokio::test]
async fn webhook_mode_checks_the_secret_token() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &tg, json!({"mode": "webhook", "webhookUrl": "https://bot.example.invalid/telegram/webhook", "webhookSecret": "s3cret-token"})).await;
    tg.wait_for_call("setWebhook", 1, WAIT).await.unwrap();
    // Calls are recorded as they arrive; give the fake a moment to apply it.
    let mut hook = tg.webhook();
    for _ in 0..100 {
        if hook.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        hook = tg.webhook();
    }
    assert_eq!(
        hook.as_ref().map(|h| h.secret_token.as_deref()),
        Some(Some("s3cret-token")),
        "{:?}",
        tg.calls()
            .iter()
            .map(|c| (c.method.clone(), c.status, c.body.clone()))
            .collect::<Vec<_>>()
    );
    let update = json!({"update_id": 5, "message": {"message_id": 11, "date": 1_700_000_000, "chat": {"id": 42, "type": "private", "first_name": "Ann"}, "from": {"id": 42, "is_bot": false, "first_name": "Ann", "username": "ann"}, "text": "via webhook"}});
    let url = format!("{}/telegram/webhook", gw.base_url());
    let r = gw
        .http()
        .post(&url)
        .header("x-telegram-bot-api-secret-token", "wrong")
        .json(&update)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = gw
        .http()
        .post(&url)
        .header("x-telegram-bot-api-secret-token", "s3cret-token")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // The fake only lets the bot write to chats it has seen in an update.
    tg.push_update(json!({"message": {"message_id": 1, "date": 1_700_000_000, "chat": {"id": 42, "type": "private", "first_name": "Ann"}, "from": {"id": 42, "is_bot": false, "first_name": "Ann"}, "text": "(seen)"}}));
    for _ in 0..2 {
        // Telegram retries a webhook call it thinks failed: the second is a duplicate.
        let r = gw
            .http()
            .post(&url)
            .header("x-telegram-bot-api-secret-token", "s3cret-token")
            .json(&update)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: via webhook");
    // The duplicate was ignored: stored once (the webhook answers 200 only once an update
    // is stored), answered once up to a graceful stop.
    assert_eq!(user_texts(&gw, "agent:main:main").await, ["via webhook"]);
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(sent_texts(&tg), ["echo: via webhook"]);
    assert!(
        tg.calls_to("getUpdates").is_empty(),
        "no polling in webhook mode"
    );
}

/// The user messages of `key`'s transcript, in order.
pub(crate) async fn user_texts(gw: &Gateway, key: &str) -> Vec<String> {
    crate::common::get_text(gw, &format!("/api/sessions/{key}/transcript"))
        .await
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_telegram_config_change_restarts_only_telegram() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let gw = gateway(&fake, &tg, json!({})).await;
    let mut ws = crate::common::chat(&gw, "main").await;
    tg.wait_for_call("getMe", 1, WAIT).await.unwrap();
    let mark = gw.log_mark();
    let cfg = crate::common::config_for(
        &fake,
        json!({"channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": ["42", "77"], "pollTimeoutSeconds": 1}}}),
    );
    gw.write_config(&cfg).await.unwrap();
    gw.wait_for_log_since(mark, "telegram: stopping (config changed)", WAIT)
        .await
        .unwrap();
    tg.wait_for_call("getMe", 2, WAIT).await.unwrap();
    // The web chat socket stayed up, and the new allowlist is in force.
    ws.send_text("web chat still here").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "echo: web chat still here"
    );
    tg.user_message(
        Chat::private(77),
        User::new(77, "bob", "Bob"),
        "bob is allowed now",
    );
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: bob is allowed now");
}

/// A stranger who adds the bot to their own group gets nothing, not even a command's
/// answer (groups are served only when listed: `groupPolicy` allowlist); a user without a
/// username whose first name is "@owner" does not pass `allowFrom: ["@owner"]` (an
/// @name entry matches the username field only). Catches: serving unlisted groups, or
/// matching @names against display names.
#[tokio::test]
async fn unlisted_groups_and_spoofed_names_get_nothing() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut gw = start(
        &fake,
        json!({"channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
            "allowFrom": ["42", "@owner"], "dmPolicy": "allowlist", "groups": {"-5": {}}, "pollTimeoutSeconds": 1}}}),
    )
    .await;
    // Even an allowed sender is not answered in a group nobody listed.
    tg.user_message(Chat::group(-9, "eve's group"), ann(), "@switchboard_bot hi");
    let eve = User::new(66, "eve", "Eve");
    tg.user_message(Chat::group(-9, "eve's group"), eve, "/status");
    let spoof = User::new(67, "", "@owner");
    tg.user_message(Chat::private(67), spoof, "it is me, the owner");
    // Updates are routed one at a time, in order: once the allowed message is answered,
    // the three before it were decided.
    tg.user_message(
        Chat::group(-5, "team"),
        ann(),
        "@switchboard_bot I am allowed",
    );
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "echo: I am allowed");
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(sent_texts(&tg), ["echo: I am allowed"]);
    assert_eq!(fake.request_count(), 1);
    let log = gw.stderr_lines().join("\n");
    assert_eq!(
        log.matches("reason=\"group not listed (groupPolicy allowlist)\"")
            .count(),
        2,
        "{log}"
    );
    assert!(log.contains("reason=\"sender not in allowFrom\""), "{log}");
}

/// With `session.dmScope: "main"` (the default) two allowed DM senders share one session,
/// and the daemon warns about it at start; with `"per-peer"` each sender gets a session of
/// their own (applied live). Catches: a missing warning, or DMs of different people mixed
/// into one transcript under per-peer.
#[tokio::test]
async fn dm_scope_gives_each_sender_a_session_and_sharing_is_warned_about() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let telegram = json!({"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": [42, 77], "pollTimeoutSeconds": 1});
    let gw = start(&fake, json!({"channels": {"telegram": telegram.clone()}})).await;
    gw.wait_for_log(
        "2 allowed DM senders share the session agent:main:main",
        WAIT,
    )
    .await
    .unwrap();
    let mark = gw.log_mark();
    let cfg = crate::common::config_for(
        &fake,
        json!({"session": {"dmScope": "per-peer"}, "channels": {"telegram": telegram}}),
    );
    gw.write_config(&cfg).await.unwrap();
    gw.wait_for_log_since(mark, "config applied", WAIT)
        .await
        .unwrap();
    tg.user_message(Chat::private(42), ann(), "from ann");
    tg.user_message(Chat::private(77), User::new(77, "bob", "Bob"), "from bob");
    tg.wait_for_sent(2, WAIT).await.unwrap();
    let sessions = crate::common::get_json(&gw, "/api/sessions").await;
    let mut keys: Vec<String> = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionKey"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    assert_eq!(keys, ["agent:main:dm:42", "agent:main:dm:77"]);
    let bob = crate::common::get_text(&gw, "/api/sessions/agent:main:dm:77/transcript").await;
    assert!(
        bob.contains("from bob") && !bob.contains("from ann"),
        "{bob}"
    );
}
