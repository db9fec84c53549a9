//! Tests of `sendMessage` and friends: HTML and length checks, forum topics, replies, edits.

use serde_json::json;

use super::{alice, call, known_private_chat, send, start};
use crate::fake_telegram::Chat;

#[tokio::test]
async fn html_is_checked() {
    let telegram = start().await;
    known_private_chat(&telegram).await;
    let html = |text: &str| json!({"chat_id": 42, "text": text, "parse_mode": "HTML"});
    let (status, body) = send(&telegram, html("<b>x</b> &amp;")).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["text"], "x &");
    for bad in ["<b>x", "a & b"] {
        let (status, body) = send(&telegram, html(bad)).await;
        assert_eq!(status, 400, "{bad}");
        let description = body["description"].as_str().unwrap();
        assert!(
            description.starts_with("Bad Request: can't parse entities: "),
            "{description}"
        );
    }
    // Without parse_mode the same text is plain.
    assert_eq!(
        send(&telegram, json!({"chat_id": 42, "text": "a & b"}))
            .await
            .0,
        200
    );
    let sent = telegram.sent_messages();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].plain_text, "x &");
    assert_eq!(sent[0].parse_mode.as_deref(), Some("HTML"));
    telegram.assert_no_violations();
}

#[tokio::test]
async fn text_must_be_non_empty_and_at_most_4096_utf16_units() {
    let telegram = start().await;
    known_private_chat(&telegram).await;
    let text = |text: String| json!({"chat_id": 42, "text": text});
    let (status, body) = send(&telegram, text("x".repeat(4097))).await;
    assert_eq!(
        (status, body["description"].clone()),
        (400, json!("Bad Request: message is too long"))
    );
    // An emoji outside the BMP counts two units.
    assert_eq!(send(&telegram, text("🙂".repeat(2049))).await.0, 400);
    assert_eq!(send(&telegram, text("x".repeat(4096))).await.0, 200);
    let (status, body) = send(&telegram, text("  ".to_owned())).await;
    assert_eq!(
        (status, body["description"].clone()),
        (400, json!("Bad Request: message text is empty"))
    );
    assert_eq!(telegram.sent_messages().len(), 1);
}

#[tokio::test]
async fn forum_topic_messages_carry_the_thread() {
    let telegram = start().await;
    let chat = Chat::forum_topic(-1001234, 7);
    let id = telegram.user_message(chat, alice(), "@switchboard_bot hello");
    let (_, body) = call(&telegram, "GetUpdates", json!({})).await;
    let message = &body["result"][0]["message"];
    assert_eq!(body["result"][0]["update_id"], id);
    assert_eq!(message["message_thread_id"], 7);
    assert_eq!(message["is_topic_message"], true);
    assert_eq!(message["chat"]["is_forum"], true);
    assert_eq!(
        message["reply_to_message"]["forum_topic_created"]["name"],
        "Topic 7"
    );
    assert_eq!(
        message["entities"],
        json!([{"type": "mention", "offset": 0, "length": 16}])
    );
    let reply = json!({"chat_id": -1001234, "text": "hi", "message_thread_id": 7,
                       "reply_parameters": {"message_id": message["message_id"]}});
    let (status, body) = send(&telegram, reply).await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["message_thread_id"], 7);
    let sent = &telegram.sent_messages()[0];
    assert_eq!(
        (sent.thread_id, sent.reply_to),
        (Some(7), message["message_id"].as_i64())
    );
    telegram.assert_no_violations();
}

#[tokio::test]
async fn reply_to_bot_quotes_the_bot_message() {
    let telegram = start().await;
    known_private_chat(&telegram).await;
    let (_, body) = send(
        &telegram,
        json!({"chat_id": 42, "text": "<i>question?</i>", "parse_mode": "html"}),
    )
    .await;
    let bot_message = body["result"]["message_id"].as_i64().unwrap();
    telegram.reply_to_bot(Chat::private(42), alice(), "answer", bot_message);
    let (_, body) = call(&telegram, "GetUpdates", json!({})).await;
    let replied = &body["result"][0]["message"]["reply_to_message"];
    assert_eq!(replied["message_id"], bot_message);
    assert_eq!(replied["from"]["id"], 1000);
    assert_eq!(replied["text"], "question?");
}

#[tokio::test]
async fn writing_to_an_unknown_chat_is_a_violation() {
    let telegram = start().await;
    assert_eq!(
        send(&telegram, json!({"chat_id": 77, "text": "hi"}))
            .await
            .0,
        200
    );
    assert_eq!(telegram.violations().len(), 1);
}

#[tokio::test]
async fn edits_and_deletes_bot_messages() {
    let telegram = start().await;
    known_private_chat(&telegram).await;
    let (_, body) = send(&telegram, json!({"chat_id": 42, "text": "draft"})).await;
    let id = body["result"]["message_id"].clone();
    let edit = |text: &str| json!({"chat_id": 42, "message_id": id, "text": text});
    let (status, body) = call(&telegram, "EditMessageText", edit("final")).await;
    assert_eq!(
        (status, body["result"]["text"].clone()),
        (200, json!("final"))
    );
    assert_eq!(
        call(&telegram, "EditMessageText", edit("final")).await.0,
        400
    );
    let delete = json!({"chat_id": 42, "message_id": id});
    assert_eq!(call(&telegram, "DeleteMessage", delete).await.0, 200);
    assert_eq!(
        call(&telegram, "EditMessageText", edit("again")).await.0,
        400
    );
    telegram.assert_no_violations();
}

/// Buttons: `reply_markup` is recorded and checked (`callback_data` of 1–64 bytes); a press
/// arrives as a `callback_query` update carrying the message and its keyboard; the query is
/// answered once; an edit without `reply_markup` drops the keyboard.
#[tokio::test]
async fn inline_keyboards_are_pressed_answered_once_and_dropped_by_an_edit() {
    let telegram = start().await;
    known_private_chat(&telegram).await;
    let too_long = "x".repeat(65);
    let (status, _) = send(
        &telegram,
        json!({"chat_id": 42, "text": "pick", "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": too_long}]]}}),
    )
    .await;
    assert_eq!(status, 400);
    let (status, body) = send(
        &telegram,
        json!({"chat_id": 42, "text": "pick", "reply_markup": {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = body["result"]["message_id"].as_i64().unwrap();
    assert_eq!(
        telegram.sent_messages()[0].buttons(),
        vec![("A".to_string(), "a".to_string())]
    );
    assert!(telegram
        .press_button(Chat::private(42), alice(), id, "b")
        .is_err());
    let query = telegram
        .press_button(Chat::private(42), alice(), id, "a")
        .unwrap();
    let (_, updates) = call(
        &telegram,
        "GetUpdates",
        json!({"allowed_updates": ["message", "callback_query"]}),
    )
    .await;
    let q = &updates["result"][0]["callback_query"];
    assert_eq!(
        (q["id"].as_str(), q["data"].as_str()),
        (Some(query.as_str()), Some("a"))
    );
    assert_eq!(
        q["message"]["reply_markup"]["inline_keyboard"][0][0]["callback_data"],
        "a"
    );
    let answer = json!({"callback_query_id": query, "text": "ok"});
    assert_eq!(
        call(&telegram, "AnswerCallbackQuery", answer.clone())
            .await
            .0,
        200
    );
    assert_eq!(call(&telegram, "AnswerCallbackQuery", answer).await.0, 400);
    assert_eq!(telegram.callback_answers().len(), 1);
    let (status, _) = call(
        &telegram,
        "EditMessageText",
        json!({"chat_id": 42, "message_id": id, "text": "picked"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(telegram.edits()[0].reply_markup, None);
    assert!(
        telegram
            .press_button(Chat::private(42), alice(), id, "a")
            .is_err(),
        "no keyboard left"
    );
    telegram.assert_no_violations();
}
