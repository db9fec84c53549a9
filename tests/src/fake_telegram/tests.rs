//! Tests of the fake Telegram, driven over HTTP with reqwest the way teloxide calls it.

#![allow(clippy::unwrap_used)]

mod messages;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Chat, Failure, FakeTelegram, User};

const TOKEN: &str = "123456:TEST-token";
const WAIT: Duration = Duration::from_secs(5);

pub(super) async fn start() -> FakeTelegram {
    FakeTelegram::start(TOKEN).await.unwrap()
}

/// Calls `method` the way teloxide does (PascalCase name, JSON body); returns status and body.
pub(super) async fn call(telegram: &FakeTelegram, method: &str, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/bot{TOKEN}/{method}", telegram.api_url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

pub(super) fn alice() -> User {
    User::new(42, "alice", "Alice")
}

/// A private chat with Alice that the bot knows about (the update is confirmed).
pub(super) async fn known_private_chat(telegram: &FakeTelegram) {
    let id = telegram.user_message(Chat::private(42), alice(), "hi");
    let (status, _) = call(telegram, "GetUpdates", json!({"offset": id + 1})).await;
    assert_eq!(status, 200);
}

pub(super) async fn send(telegram: &FakeTelegram, body: Value) -> (u16, Value) {
    call(telegram, "SendMessage", body).await
}

#[tokio::test]
async fn get_me_describes_the_bot() {
    let telegram = start().await;
    let (status, body) = call(&telegram, "GetMe", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"ok": true, "result": {
            "id": 1000, "is_bot": true, "first_name": "Switchboard", "username": "switchboard_bot",
            "can_join_groups": true, "can_read_all_group_messages": false,
            "supports_inline_queries": false, "can_connect_to_business": false,
            "has_main_web_app": false,
        }})
    );
    assert_eq!(telegram.calls()[0].method, "getMe");
    assert_eq!(telegram.calls()[0].status, 200);
    telegram.assert_no_violations();
}

#[tokio::test]
async fn long_poll_returns_a_pushed_update_and_the_offset_confirms_it() {
    let telegram = start().await;
    let poll = tokio::spawn({
        let telegram = telegram.clone();
        async move { call(&telegram, "GetUpdates", json!({"offset": 0, "timeout": 30})).await }
    });
    telegram.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    let id = telegram.user_message(Chat::private(42), alice(), "/help me");
    let (status, body) = poll.await.unwrap();
    assert_eq!(status, 200);
    let updates = body["result"].as_array().unwrap();
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0]["update_id"], id);
    let message = &updates[0]["message"];
    assert_eq!(message["text"], "/help me");
    assert_eq!(
        message["chat"],
        json!({"id": 42, "type": "private", "first_name": "Alice", "username": "alice"})
    );
    assert_eq!(message["from"]["username"], "alice");
    assert_eq!(
        message["entities"],
        json!([{"type": "bot_command", "offset": 0, "length": 5}])
    );
    assert_eq!(telegram.pending_updates(), 1);

    let (_, body) = call(&telegram, "GetUpdates", json!({"offset": id + 1})).await;
    assert_eq!(body["result"], json!([]));
    assert_eq!(telegram.pending_updates(), 0);
    assert_eq!(telegram.offsets(), vec![Some(0), Some(id + 1)]);
    telegram.assert_no_violations();
}

#[tokio::test]
async fn unconfirmed_updates_are_returned_again_up_to_limit() {
    let telegram = start().await;
    let first = telegram.user_message(Chat::private(42), alice(), "one");
    telegram.user_message(Chat::private(42), alice(), "two");
    let (_, body) = call(&telegram, "GetUpdates", json!({"limit": 1})).await;
    assert_eq!(body["result"][0]["update_id"], first);
    let (_, body) = call(&telegram, "GetUpdates", json!({})).await;
    assert_eq!(body["result"].as_array().unwrap().len(), 2);
    assert_eq!(telegram.offsets(), vec![None, None]);
}

#[tokio::test]
async fn long_poll_times_out_with_no_updates() {
    let telegram = start().await;
    let started = Instant::now();
    let (status, body) = call(&telegram, "GetUpdates", json!({"timeout": 1})).await;
    assert_eq!((status, body), (200, json!({"ok": true, "result": []})));
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn too_many_requests_carries_retry_after_then_sends() {
    let telegram = start().await;
    known_private_chat(&telegram).await;
    telegram.fail_next("sendMessage", Failure::TooManyRequests { retry_after: 3 });
    let (status, body) = send(&telegram, json!({"chat_id": 42, "text": "hi"})).await;
    assert_eq!(status, 429);
    assert_eq!(
        body,
        json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 3",
               "parameters": {"retry_after": 3}})
    );
    assert!(telegram.sent_messages().is_empty());
    let (status, body) = send(&telegram, json!({"chat_id": 42, "text": "hi"})).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["from"]["id"], 1000);
    let sent = telegram.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].chat_id, sent[0].text.as_str()), (42, "hi"));
    let statuses: Vec<u16> = telegram
        .calls_to("sendmessage")
        .iter()
        .map(|call| call.status)
        .collect();
    assert_eq!(statuses, vec![429, 200]);
    telegram.assert_no_violations();
}

#[tokio::test]
async fn concurrent_get_updates_conflict() {
    let telegram = start().await;
    let first = tokio::spawn({
        let telegram = telegram.clone();
        async move { call(&telegram, "GetUpdates", json!({"timeout": 30})).await }
    });
    telegram.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    let (status, body) = call(&telegram, "GetUpdates", json!({"timeout": 30})).await;
    assert_eq!(status, 409);
    assert_eq!(
        body["description"],
        "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
    );
    assert_eq!(telegram.conflicts(), 1);
    assert_eq!(telegram.violations().len(), 1);
    telegram.user_message(Chat::private(42), alice(), "wake up");
    assert_eq!(first.await.unwrap().0, 200);
}

#[tokio::test]
async fn a_poll_whose_client_gave_up_frees_the_slot() {
    let telegram = start().await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let url = format!("{}/bot{TOKEN}/GetUpdates", telegram.api_url());
    let gave_up = client.post(&url).json(&json!({"timeout": 30})).send().await;
    assert!(gave_up.is_err());
    telegram
        .inner
        .state
        .wait_until(WAIT, |world| world.polls_in_flight == 0)
        .await
        .unwrap();
    assert_eq!(call(&telegram, "GetUpdates", json!({})).await.0, 200);
    assert_eq!(telegram.conflicts(), 0);
}

#[tokio::test]
async fn stall_answers_late_then_normally() {
    let telegram = start().await;
    telegram.fail_next("GetUpdates", Failure::Stall(Duration::from_millis(300)));
    let started = Instant::now();
    let (status, body) = call(&telegram, "GetUpdates", json!({"timeout": 0})).await;
    assert_eq!((status, body["result"].clone()), (200, json!([])));
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn drop_closes_the_connection_without_an_answer() {
    let telegram = start().await;
    telegram.fail_next("getMe", Failure::Drop);
    let url = format!("{}/bot{TOKEN}/GetMe", telegram.api_url());
    let error = reqwest::Client::new()
        .post(&url)
        .json(&json!({}))
        .send()
        .await;
    assert!(error.is_err(), "{error:?}");
    assert_eq!(call(&telegram, "GetMe", json!({})).await.0, 200);
    assert_eq!(telegram.calls_to("getMe")[0].status, 0);
}

#[tokio::test]
async fn server_errors_and_bad_requests_are_scripted() {
    let telegram = start().await;
    telegram.fail_next("getMe", Failure::ServerError(502));
    telegram.fail_next("getMe", Failure::BadRequest("chat not found".to_owned()));
    telegram.fail_next("getMe", Failure::Conflict);
    let (status, body) = call(&telegram, "GetMe", json!({})).await;
    assert_eq!(
        (status, body["description"].clone()),
        (502, json!("Bad Gateway"))
    );
    let (status, body) = call(&telegram, "GetMe", json!({})).await;
    assert_eq!(
        (status, body["description"].clone()),
        (400, json!("Bad Request: chat not found"))
    );
    assert_eq!(call(&telegram, "GetMe", json!({})).await.0, 409);
    assert_eq!(call(&telegram, "GetMe", json!({})).await.0, 200);
}

#[tokio::test]
async fn fail_after_lets_calls_through_then_fails() {
    let telegram = start().await;
    telegram.fail_after("getMe", 2, Failure::ServerError(503));
    telegram.fail_next("getMe", Failure::Conflict);
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(call(&telegram, "GetMe", json!({})).await.0);
    }
    assert_eq!(statuses, vec![200, 200, 503, 409, 200]);
}

#[tokio::test]
async fn unknown_method_is_a_violation() {
    let telegram = start().await;
    let (status, body) = call(&telegram, "SendPigeon", json!({})).await;
    assert_eq!(status, 404);
    assert_eq!(
        body,
        json!({"ok": false, "error_code": 404, "description": "Not Found: method not found"})
    );
    assert_eq!(
        telegram.violations(),
        vec!["call of unknown method sendPigeon".to_owned()]
    );
}

#[tokio::test]
async fn wrong_token_is_unauthorized() {
    let telegram = start().await;
    let response = reqwest::Client::new()
        .post(format!("{}/botWRONG/GetMe", telegram.api_url()))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"ok": false, "error_code": 401, "description": "Unauthorized"})
    );
}

#[tokio::test]
async fn get_requests_commands_actions_and_webhooks() {
    let telegram = start().await;
    known_private_chat(&telegram).await;
    let url = format!(
        "{}/bot{TOKEN}/sendChatAction?chat_id=42&action=typing",
        telegram.api_url()
    );
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(telegram.chat_actions(), vec![(42, "typing".to_owned())]);

    let commands = json!({"commands": [{"command": "stop", "description": "Stop the run"}]});
    assert_eq!(call(&telegram, "SetMyCommands", commands).await.0, 200);
    assert_eq!(
        telegram.commands(),
        vec![("stop".to_owned(), "Stop the run".to_owned())]
    );
    let bad = json!({"commands": [{"command": "Stop!", "description": "x"}]});
    assert_eq!(call(&telegram, "SetMyCommands", bad).await.0, 400);

    let hook = json!({"url": "https://example.test/hook", "secret_token": "s"});
    assert_eq!(call(&telegram, "SetWebhook", hook).await.0, 200);
    assert_eq!(call(&telegram, "GetUpdates", json!({})).await.0, 409);
    let (_, info) = call(&telegram, "GetWebhookInfo", json!({})).await;
    assert_eq!(info["result"]["url"], "https://example.test/hook");
    assert_eq!(call(&telegram, "DeleteWebhook", json!({})).await.0, 200);
    assert_eq!(telegram.webhook(), None);
    telegram.assert_no_violations();
}

#[tokio::test]
async fn hang_never_answers_until_shutdown() {
    let telegram = start().await;
    telegram.fail_next("getMe", Failure::Hang);
    let hanging = tokio::spawn({
        let telegram = telegram.clone();
        async move { call(&telegram, "GetMe", json!({})).await }
    });
    telegram.wait_for_call("getMe", 1, WAIT).await.unwrap();
    assert!(!hanging.is_finished());
    telegram.shutdown().await;
    assert_eq!(hanging.await.unwrap().0, 503);
}

/// Calls through `api_url_for` carry their client's tag, so a test tells who polled.
#[tokio::test]
async fn each_client_is_told_apart_by_its_url() {
    let telegram = start().await;
    for client in ["p1", "p2", "p1"] {
        let response = reqwest::Client::new()
            .post(format!(
                "{}/bot{TOKEN}/getUpdates",
                telegram.api_url_for(client)
            ))
            .json(&json!({"timeout": 0}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
    }
    call(&telegram, "GetUpdates", json!({"timeout": 0})).await;
    assert_eq!(
        telegram.pollers(),
        vec![Some("p1".to_owned()), Some("p2".to_owned()), None]
    );
    telegram.assert_no_violations();
}
