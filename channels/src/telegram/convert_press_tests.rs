//! Tests of the conversion of `callback_query` updates (inline keyboard presses): an
//! example, and a property over arbitrary queries.

use proptest::prelude::*;
use serde_json::{json, Value};
use teloxide::types::Update;

use super::*;

const BOT_ID: u64 = 1000;

fn me() -> BotInfo {
    BotInfo {
        id: BOT_ID,
        username: "switchboard_bot".to_string(),
        commands: vec![
            crate::MenuCommand::new("subagents", "Sub-agents"),
            crate::MenuCommand::new("status", "Status"),
            crate::MenuCommand::new("stop", "Stop"),
            crate::MenuCommand::new("new", "New").alias("reset"),
        ],
    }
}

fn parse(json: &Value) -> Update {
    serde_json::from_str(&json.to_string()).expect("teloxide reads any update")
}

/// A `callback_query` update: `from_bot` presses `data` on message 5 of `chat` (`date` 0:
/// a message Telegram no longer shows).
fn callback(data: &str, from_bot: bool, private: bool, date: i64) -> Value {
    let chat = if private {
        json!({"id": 42, "type": "private", "first_name": "Ann"})
    } else {
        json!({"id": -1005, "type": "supergroup", "title": "ops"})
    };
    json!({"update_id": 9, "callback_query": {
        "id": "cq77",
        "from": {"id": 42, "is_bot": from_bot, "first_name": "Ann", "username": "ann"},
        "message": {"message_id": 5, "date": date, "chat": chat,
                    "from": {"id": BOT_ID, "is_bot": true, "first_name": "Switchboard"}, "text": "req"},
        "chat_instance": "ci",
        "data": data,
    }})
}

/// Catches: button presses not converted (callback queries dropped as another kind of
/// update), or the presser / chat / pressed message taken from the wrong field.
#[test]
fn a_callback_query_is_a_press_by_its_sender_in_the_message_s_chat() {
    let out = convert(
        &parse(&callback("approve:a1:deny", false, false, 1_700_000_000)),
        &me(),
    );
    let Converted::Press(m, cb) = out else {
        panic!("not a press: {out:?}");
    };
    assert_eq!(
        (
            m.sender_id.as_str(),
            m.origin.chat_id.as_str(),
            m.origin.kind
        ),
        ("42", "-1005", ChatKind::Group)
    );
    assert_eq!(m.message_id.as_deref(), Some("callback:cq77"));
    let press = m.press.expect("press");
    assert_eq!(
        (press.action.as_str(), press.message_id.as_deref()),
        ("approve:a1:deny", Some("5"))
    );
    assert_eq!(
        (cb.id.0.as_str(), cb.chat.0, cb.message.0),
        ("cq77", -1005, 5)
    );
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Any callback query converts without panic: a bot's press, or one on a message
    /// Telegram no longer shows, is ignored; any other is a press carrying its data as is.
    /// Catches: a crafted `data` panicking the polling task, or presses by bots acted on.
    #[test]
    fn any_callback_query_converts_without_panic(
        data in prop_oneof![".*", "approve:[a-f0-9]{8}:(allow-once|deny)"],
        from_bot in any::<bool>(),
        private in any::<bool>(),
        shown in any::<bool>(),
    ) {
        let u = parse(&callback(&data, from_bot, private, if shown { 1_700_000_000 } else { 0 }));
        match convert(&u, &me()) {
            Converted::Press(m, _) => {
                prop_assert!(!from_bot && shown);
                prop_assert_eq!(m.press.map(|p| p.action), Some(data));
                prop_assert_eq!(m.origin.kind == ChatKind::Direct, private);
                prop_assert!(m.addressed && m.text.is_empty());
            }
            Converted::Ignored => prop_assert!(from_bot || !shown),
            other => return Err(TestCaseError::fail(format!("unexpected {other:?}"))),
        }
    }
}
