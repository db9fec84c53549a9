use proptest::prelude::*;
use serde_json::{json, Value};

use super::convert::*;
use crate::ChatKind;

const ME: &str = "UBOT1";

fn me(reply_in_thread: bool) -> Me<'static> {
    Me {
        user_id: ME,
        reply_in_thread,
    }
}

fn envelope(kind: &str, payload: Value) -> String {
    json!({"envelope_id": "e-1", "type": kind, "payload": payload, "retry_attempt": 0}).to_string()
}

fn message(channel: &str, channel_type: &str, text: &str, thread: Option<&str>) -> String {
    let mut event = json!({"type": "message", "channel": channel, "channel_type": channel_type,
        "user": "U42", "text": text, "ts": "1700000000.000100"});
    if let Some(t) = thread {
        event["thread_ts"] = json!(t);
    }
    envelope(
        "events_api",
        json!({"type": "event_callback", "event_id": "Ev1", "event": event}),
    )
}

fn item(frame_text: &str, me: Me<'_>) -> Item {
    match frame(frame_text, me) {
        Ok(Frame::Envelope { id, item }) => {
            assert_eq!(id, "e-1");
            *item
        }
        other => panic!("not an envelope: {other:?}"),
    }
}

#[test]
fn a_dm_is_addressed_and_answered_in_place() {
    let Item::Message { key, msg, thread } =
        item(&message("D1", "im", "hello &amp; bye", None), me(true))
    else {
        panic!("not a message");
    };
    assert_eq!(key, "msg:D1:1700000000.000100");
    assert_eq!(thread, None);
    assert_eq!(msg.origin.kind, ChatKind::Direct);
    assert_eq!(msg.origin.thread_id, None);
    assert!(msg.addressed);
    assert_eq!(msg.text, "hello & bye");
    assert_eq!(msg.message_id.as_deref(), Some("D1:1700000000.000100"));
}

/// Catches: a top-level mention answered at the top (not in a thread under it), the
/// mention left in the text, `replyInThread: false` ignored.
#[test]
fn a_channel_mention_opens_a_thread_unless_reply_in_thread_is_off() {
    let text = format!("<@{ME}> what is <https://a.test|this>?");
    let Item::Message { msg, .. } = item(&message("C1", "channel", &text, None), me(true)) else {
        panic!("not a message");
    };
    assert_eq!(msg.origin.kind, ChatKind::Group);
    assert_eq!(msg.origin.thread_id.as_deref(), Some("1700000000.000100"));
    assert!(msg.addressed);
    assert_eq!(msg.text, "what is this (https://a.test)?");
    let Item::Message { msg, .. } = item(&message("C1", "channel", &text, None), me(false)) else {
        panic!("not a message");
    };
    assert_eq!(msg.origin.thread_id, None);
    // Not mentioned: not addressed, and no thread opened for it.
    let Item::Message { msg, .. } = item(&message("C1", "channel", "chatting", None), me(true))
    else {
        panic!("not a message");
    };
    assert!(!msg.addressed);
    assert_eq!(msg.origin.thread_id, None);
}

#[test]
fn a_thread_reply_stays_in_its_thread() {
    let Item::Message { msg, thread, .. } = item(
        &message("C1", "channel", "more", Some("1699999999.000001")),
        me(true),
    ) else {
        panic!("not a message");
    };
    assert_eq!(msg.origin.thread_id.as_deref(), Some("1699999999.000001"));
    assert_eq!(thread, Some(("C1".into(), "1699999999.000001".into())));
    assert!(
        !msg.addressed,
        "addressed only if the bot is in the thread (decided later)"
    );
}

#[test]
fn bots_edits_and_own_messages_are_ignored() {
    let bot = json!({"type": "event_callback", "event": {"type": "message", "channel": "C1",
        "user": "U42", "bot_id": "B1", "text": "hi", "ts": "1.2"}});
    assert!(matches!(
        item(&envelope("events_api", bot), me(true)),
        Item::Ignore(_)
    ));
    let edit = json!({"type": "event_callback", "event": {"type": "message", "subtype": "message_changed",
        "channel": "C1", "ts": "1.2"}});
    assert!(matches!(
        item(&envelope("events_api", edit), me(true)),
        Item::Ignore(_)
    ));
    let own = json!({"type": "event_callback", "event": {"type": "message", "channel": "D1",
        "channel_type": "im", "user": ME, "text": "hi", "ts": "1.2"}});
    assert!(matches!(
        item(&envelope("events_api", own), me(true)),
        Item::Ignore(_)
    ));
}

#[test]
fn a_slash_command_is_its_text() {
    let p = json!({"channel_id": "C1", "user_id": "U42", "user_name": "ann",
        "command": "/status", "text": "", "trigger_id": "t.1"});
    let Item::Command { key, msg } = item(&envelope("slash_commands", p), me(true)) else {
        panic!("not a command");
    };
    assert_eq!(key, "cmd:t.1");
    assert_eq!(msg.text, "/status");
    assert!(msg.addressed);
    let p = json!({"channel_id": "D9", "user_id": "U42", "command": "/subagents",
        "text": "send 1 &lt;hi&gt;", "trigger_id": "t.2"});
    let Item::Command { msg, .. } = item(&envelope("slash_commands", p), me(true)) else {
        panic!("not a command");
    };
    assert_eq!(msg.text, "/subagents send 1 <hi>");
    assert_eq!(msg.origin.kind, ChatKind::Direct);
}

#[test]
fn a_button_press_names_its_action_and_message() {
    let p = json!({"type": "block_actions", "user": {"id": "U42", "username": "ann"},
        "container": {"message_ts": "5.6", "channel_id": "C1"}, "channel": {"id": "C1"},
        "message": {"ts": "5.6", "thread_ts": "1.2"}, "trigger_id": "tr",
        "actions": [{"action_id": "approve:x:deny"}]});
    let Item::Press { key, msg, at } = item(&envelope("interactive", p), me(true)) else {
        panic!("not a press");
    };
    assert_eq!(key, "press:tr");
    let press = msg.press.clone().unwrap_or_else(|| panic!("no press"));
    assert_eq!(press.action, "approve:x:deny");
    assert_eq!(press.message_id.as_deref(), Some("5.6"));
    assert_eq!(msg.origin.thread_id.as_deref(), Some("1.2"));
    assert_eq!(
        (at.channel.as_str(), at.ts.as_str(), at.user.as_str()),
        ("C1", "5.6", "U42")
    );
}

#[test]
fn hello_and_disconnect_frames() {
    assert_eq!(
        frame(r#"{"type":"hello","num_connections":1}"#, me(true)),
        Ok(Frame::Hello)
    );
    assert_eq!(
        frame(
            r#"{"type":"disconnect","reason":"refresh_requested"}"#,
            me(true)
        ),
        Ok(Frame::Disconnect("refresh_requested".into()))
    );
    assert!(frame("not json", me(true)).is_err());
}

/// Catches: a message with only a file ignored, a `file_share` dropped as a subtype, a
/// stranger's unaddressed file in a channel marked as addressed.
#[test]
fn a_shared_file_is_a_message_even_without_text() {
    let file = json!({"id": "F1", "name": "cat.png", "mimetype": "image/png", "size": 10,
        "url_private_download": "https://files.slack.com/files-pri/T1-F1/download/cat.png"});
    let shared = |channel: &str, channel_type: &str, text: &str| {
        envelope(
            "events_api",
            json!({"type": "event_callback", "event": {"type": "message", "subtype": "file_share",
                "channel": channel, "channel_type": channel_type, "user": "U42", "text": text,
                "ts": "1700000000.000200", "files": [file.clone()]}}),
        )
    };
    let Item::Message { msg, .. } = item(&shared("D1", "im", ""), me(true)) else {
        panic!("a file alone is a message");
    };
    assert_eq!(msg.text, "");
    assert_eq!(msg.media.len(), 1);
    assert_eq!(msg.media[0].name.as_deref(), Some("cat.png"));
    assert!(msg.addressed);
    let Item::Message { msg, .. } = item(&shared("C1", "channel", "look"), me(true)) else {
        panic!("a file with text is a message");
    };
    assert!(!msg.addressed, "not mentioned in a channel");
    let Item::Message { msg, .. } = item(&shared("C1", "channel", "<@UBOT1> look"), me(true))
    else {
        panic!("a mention with a file is a message");
    };
    assert!(msg.addressed);
    assert_eq!(msg.text, "look");
    assert_eq!(msg.media.len(), 1);
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[ -~]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("C1"),
            Just("D1"),
            Just("U42"),
            Just("1.2"),
            Just(ME),
            Just("message"),
            Just("im"),
            Just("block_actions"),
            Just("/status"),
            Just("app_mention"),
            Just("file_share"),
            Just("F1"),
            Just("https://files.slack.com/f/a.png")
        ]
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("type"),
                    Just("event"),
                    Just("channel"),
                    Just("user"),
                    Just("ts"),
                    Just("text"),
                    Just("thread_ts"),
                    Just("channel_id"),
                    Just("user_id"),
                    Just("command"),
                    Just("trigger_id"),
                    Just("actions"),
                    Just("action_id"),
                    Just("container"),
                    Just("message_ts"),
                    Just("id"),
                    Just("subtype"),
                    Just("channel_type"),
                    Just("message"),
                    Just("files"),
                    Just("url_private")
                ]
                .prop_map(str::to_owned),
                inner,
                0..6,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Whatever Slack (or anyone on the socket) sends, reading it never panics, and what
    /// reaches the gateway has checked ids, bounded text, and only the bot's own threads.
    #[test]
    fn hostile_envelopes_are_read_safely(
        kind in prop_oneof![Just("events_api"), Just("slash_commands"), Just("interactive"), Just("x")],
        payload in arb_json(),
        reply_in_thread in any::<bool>(),
    ) {
        let text = envelope(kind, payload);
        let me = me(reply_in_thread);
        let Ok(Frame::Envelope { item, .. }) = frame(&text, me) else {
            return Err(TestCaseError::fail("an envelope not read as one"));
        };
        if let Item::Message { msg, .. } = &*item {
            prop_assert!(!msg.text.is_empty() || !msg.media.is_empty());
            prop_assert!(msg.media.len() <= crate::media::MAX_MEDIA_PER_MESSAGE);
        }
        let msg = match *item {
            Item::Message { msg, .. } | Item::Command { msg, .. } | Item::Press { msg, .. } => msg,
            Item::Ignore(_) => return Ok(()),
        };
        prop_assert!(is_slack_id(&msg.origin.chat_id));
        prop_assert!(is_slack_id(&msg.sender_id));
        prop_assert!(msg.sender_id != ME);
        prop_assert!(msg.text.chars().count() <= MAX_INBOUND_TEXT + 40);
        prop_assert!(msg.origin.thread_id.as_deref().is_none_or(is_ts));
    }

    /// Arbitrary text never panics the frame reader.
    #[test]
    fn arbitrary_frames_never_panic(text in "[ -~]{0,200}") {
        let _ = frame(&text, me(true));
    }
}
