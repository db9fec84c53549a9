//! `message` end to end: a message to another web chat listed in
//! `tools.message.allowTargets`, by channel + chat id and by session key, delivered through
//! the outbox; a chat not listed refused, and any chat written to with the old
//! `tools.message.allowAnyChat`. (The attacks on other chats: `authority_chats`.)

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;

use crate::common::{chat, start, WAIT};
use crate::tools_support::call;

/// Catches: `message` writing to chats not listed, or not delivering through the outbox.
#[tokio::test]
async fn messages_go_to_listed_chats_only() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"tools": {"message": {"allowTargets": ["webchat:team"]}}}),
    )
    .await;
    let mut team = chat(&gw, "team").await;
    team.send_text("hello from team").await.unwrap();
    assert_eq!(
        team.next_message(WAIT).await.unwrap(),
        "echo: hello from team"
    );
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "m1",
        "message",
        r#"{"channel": "webchat", "chatId": "team", "text": "ping by chat id"}"#,
    )
    .await;
    assert_eq!(
        r,
        r#"{"channel":"webchat","chatId":"team","status":"queued"}"#
    );
    assert_eq!(team.next_message(WAIT).await.unwrap(), "ping by chat id");
    let r = call(
        &fake,
        &mut ws,
        "m2",
        "message",
        r#"{"sessionKey": "agent:main:webchat:group:team", "text": "ping by key"}"#,
    )
    .await;
    assert!(r.contains("\"queued\""), "{r}");
    assert_eq!(team.next_message(WAIT).await.unwrap(), "ping by key");
    let r = call(
        &fake,
        &mut ws,
        "m3",
        "message",
        r#"{"channel": "webchat", "chatId": "stranger", "text": "hi"}"#,
    )
    .await;
    assert!(
        r.starts_with("error: this run writes only to its own chat; webchat chat stranger is not in tools.message.allowTargets"),
        "{r}"
    );
    let r = call(&fake, &mut ws, "m4", "message", r#"{"text": "to nowhere"}"#).await;
    assert_eq!(r, "error: give either sessionKey, or channel and chatId");
    fake.assert_no_violations();
}

/// With `tools.message.allowAnyChat`, a chat the gateway has no session with is written to
/// as well (a web chat open on it receives the message).
/// Catches: the switch ignored, or a message to a new chat never delivered.
#[tokio::test]
async fn allow_any_chat_reaches_a_chat_without_a_session() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"tools": {"message": {"allowAnyChat": true}}})).await;
    let mut stranger = chat(&gw, "stranger").await;
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "a1",
        "message",
        r#"{"channel": "webchat", "chatId": "stranger", "text": "hello, new chat"}"#,
    )
    .await;
    assert_eq!(
        r,
        r#"{"channel":"webchat","chatId":"stranger","status":"queued"}"#
    );
    assert_eq!(
        stranger.next_message(WAIT).await.unwrap(),
        "hello, new chat"
    );
    fake.assert_no_violations();
}
