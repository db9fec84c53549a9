//! Slack end to end: the real binary's Socket Mode + Web API adapter against the fake
//! Slack — DMs, channel mentions answered in a thread (the thread its own session),
//! `replyInThread: false`, allowlists, slash commands, 429 + `Retry-After`, `disconnect`
//! and a lost socket, redelivered envelopes, and every envelope acked.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_slack::{Failure, FakeSlack, Posted, SUser, BOT_USER};
use switchboard_testkit::harness::Gateway;

use crate::common::{start, WAIT};

pub(crate) const BOT_TOKEN: &str = "xoxb-slack-test-token";
pub(crate) const APP_TOKEN: &str = "xapp-slack-test-token";
pub(crate) const GENERAL: &str = "C0GENERAL";

pub(crate) fn ann() -> SUser {
    SUser::new("UANN00001", "ann")
}

pub(crate) fn eve() -> SUser {
    SUser::new("UEVE00001", "eve")
}

pub(crate) fn mention(text: &str) -> String {
    format!("<@{BOT_USER}> {text}")
}

/// A daemon on the fake Slack: Ann allowed, `#general` listed; `slack` merged in.
pub(crate) async fn gateway(fake: &FakeModel, sl: &FakeSlack, slack: Value) -> Gateway {
    gateway_with(fake, sl, slack, json!({})).await
}

pub(crate) async fn gateway_with(
    fake: &FakeModel,
    sl: &FakeSlack,
    slack: Value,
    rest: Value,
) -> Gateway {
    sl.add_channel(GENERAL);
    let mut s = json!({"enabled": true, "botToken": BOT_TOKEN, "appToken": APP_TOKEN,
        "apiUrl": sl.api_url(), "dmPolicy": "allowlist", "allowFrom": [ann().id],
        "channels": {GENERAL: {}}});
    crate::common::merge(&mut s, &slack);
    let mut patch = json!({"channels": {"slack": s}});
    crate::common::merge(&mut patch, &rest);
    let gw = start(fake, patch).await;
    sl.wait_connected(1, WAIT).await.unwrap();
    gw
}

pub(crate) async fn post_with(sl: &FakeSlack, text: &str) -> Posted {
    sl.wait_post(WAIT, |p| p.text.contains(text)).await.unwrap()
}

/// Catches: DMs unanswered, a channel mention answered at the top instead of in a thread
/// under it, a thread reply to the bot ignored or put in a new session, the `app_mention`
/// twin of a mention answered twice, an envelope left unacked.
#[tokio::test]
async fn a_dm_is_answered_and_a_channel_mention_becomes_a_thread_session() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let _gw = gateway(&fake, &sl, json!({})).await;

    sl.dm(&ann(), "hello **there**");
    let dm = post_with(&sl, "echo: hello").await;
    assert_eq!(dm.channel, sl.dm_channel(&ann()));
    assert_eq!(dm.thread_ts, None);
    assert_eq!(dm.text, "echo: hello *there*", "Markdown became mrkdwn");

    let top = sl.channel_message(GENERAL, &ann(), &mention("remember kumquat"));
    let first = post_with(&sl, "echo: remember kumquat").await;
    assert_eq!(first.channel, GENERAL);
    assert_eq!(
        first.thread_ts.as_deref(),
        Some(top.as_str()),
        "answered in a thread"
    );

    // A reply in that thread addresses the bot without a mention, in the same session.
    sl.thread_reply(GENERAL, &top, &ann(), "which fruit?");
    let second = post_with(&sl, "echo: which fruit?").await;
    assert_eq!(second.thread_ts.as_deref(), Some(top.as_str()));
    let asked = fake
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("which fruit?"))
        .unwrap();
    assert!(
        asked.body.to_string().contains("remember kumquat"),
        "same session"
    );

    // Another top-level mention: another thread, another session.
    let other = sl.channel_message(GENERAL, &ann(), &mention("a new topic"));
    let third = post_with(&sl, "echo: a new topic").await;
    assert_eq!(third.thread_ts.as_deref(), Some(other.as_str()));
    let asked = fake
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("a new topic"))
        .unwrap();
    assert!(!asked.body.to_string().contains("kumquat"), "a new session");

    // Not mentioned at the top: not addressed.
    sl.channel_message(GENERAL, &ann(), "just chatting");
    sl.wait_all_acked(WAIT).await.unwrap();
    assert_eq!(sl.posted().len(), 4, "{:?}", sl.posted());
    assert_eq!(
        fake.requests_containing("remember kumquat"),
        2,
        "one run each, no double"
    );
    sl.assert_no_violations();
    fake.assert_no_violations();
}

/// Catches: `replyInThread: false` ignored; strangers answered in DMs or channels.
#[tokio::test]
async fn reply_in_thread_off_answers_at_the_top_and_strangers_are_refused() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let _gw = gateway(&fake, &sl, json!({"replyInThread": false})).await;

    sl.dm(&eve(), "let me in");
    sl.channel_message(GENERAL, &eve(), &mention("me too"));
    sl.channel_message(GENERAL, &ann(), &mention("at the top"));
    let p = post_with(&sl, "echo: at the top").await;
    assert_eq!(
        (p.channel.as_str(), p.thread_ts.as_deref()),
        (GENERAL, None)
    );
    sl.wait_all_acked(WAIT).await.unwrap();
    assert_eq!(sl.posted().len(), 1, "{:?}", sl.posted());
    assert_eq!(fake.requests_containing("let me in"), 0);
    assert_eq!(fake.requests_containing("me too"), 0);
    sl.assert_no_violations();
}

/// Catches: slash command envelopes not read as commands (sent to the model), or answered
/// elsewhere than their channel.
#[tokio::test]
async fn a_slash_command_is_answered_in_its_channel() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let _gw = gateway(&fake, &sl, json!({})).await;

    sl.slash_command(GENERAL, &ann(), "/status", "");
    let p = post_with(&sl, "Session: agent:main:slack:group:C0GENERAL").await;
    assert_eq!(p.channel, GENERAL);
    sl.wait_all_acked(WAIT).await.unwrap();
    assert_eq!(fake.request_count(), 0, "a command never reaches the model");
    sl.assert_no_violations();
}

/// Catches: a 429's `Retry-After` not honoured (the fake flags a call inside it), or the
/// reply lost after a rate limit.
#[tokio::test]
async fn a_rate_limited_post_waits_out_retry_after_and_is_delivered() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let _gw = gateway(&fake, &sl, json!({})).await;

    sl.fail_next("chat.postMessage", Failure::RateLimited(1));
    sl.dm(&ann(), "slow down");
    post_with(&sl, "echo: slow down").await;
    let outcomes: Vec<String> = sl
        .calls()
        .into_iter()
        .filter(|c| c.method == "chat.postMessage")
        .map(|c| c.outcome)
        .collect();
    assert_eq!(outcomes, vec!["ratelimited", "ok"]);
    sl.assert_no_violations();
}

/// Catches: no reconnect after `disconnect` or a lost socket, a message sent meanwhile
/// lost, an envelope handled twice after its redelivery on the new connection.
#[tokio::test]
async fn disconnect_and_a_lost_socket_reconnect_without_losing_messages() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let _gw = gateway(&fake, &sl, json!({})).await;

    sl.dm(&ann(), "before");
    post_with(&sl, "echo: before").await;
    assert!(sl.disconnect("refresh_requested"));
    sl.dm(&ann(), "during the refresh");
    sl.wait_connected(2, WAIT).await.unwrap();
    post_with(&sl, "echo: during the refresh").await;

    assert!(sl.drop_socket());
    sl.dm(&ann(), "after the loss");
    sl.wait_connected(3, WAIT).await.unwrap();
    post_with(&sl, "echo: after the loss").await;
    sl.wait_all_acked(WAIT).await.unwrap();
    let opened = sl
        .calls()
        .iter()
        .filter(|c| c.method == "apps.connections.open")
        .count();
    assert_eq!(opened, 3, "a new apps.connections.open for each connection");
    assert_eq!(sl.posted().len(), 3, "{:?}", sl.posted());
    sl.assert_no_violations();
}

/// Catches: a redelivered envelope (Slack's retry after a lost ack) answered again, or
/// not acked again.
#[tokio::test]
async fn a_redelivered_envelope_is_acked_and_answered_once() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let _gw = gateway(&fake, &sl, json!({})).await;

    sl.dm(&ann(), "only once");
    post_with(&sl, "echo: only once").await;
    let env = sl.wait_all_acked(WAIT).await.unwrap();
    let runs = fake.request_count();
    let id = env[0].envelope_id.clone();
    sl.redeliver(&id);
    let again = sl.wait_acked(&id, 2, WAIT).await.unwrap();
    assert_eq!((again.deliveries, again.acks), (2, 2), "{again:?}");
    // A later message is answered: the redelivery was handled before it.
    sl.dm(&ann(), "and then");
    post_with(&sl, "echo: and then").await;
    assert_eq!(
        fake.request_count(),
        runs + 1,
        "one more run: \"and then\"'s"
    );
    assert_eq!(
        sl.posted()
            .iter()
            .filter(|p| p.text.contains("only once"))
            .count(),
        1
    );
    sl.assert_no_violations();
}
