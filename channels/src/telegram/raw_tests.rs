//! Tests of the update repair: media objects Telegram may send without `mime_type` (or
//! with one the `mime` crate cannot parse) reach the conversion as media, not as an empty
//! message; examples and a property over generated media messages.

use proptest::prelude::*;
use serde_json::{json, Value};
use teloxide::types::MessageKind;

use super::*;
use crate::telegram::convert::{convert, Converted};
use crate::telegram::BotInfo;
use crate::MediaKind;

fn me() -> BotInfo {
    BotInfo {
        id: 1000,
        username: "switchboard_bot".to_string(),
        commands: Vec::new(),
    }
}

fn update(field: &str, media: Value, from: Value, caption: Option<&str>) -> Value {
    let mut m = json!({
        "message_id": 9, "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
        "from": from,
    });
    m[field] = media;
    if let Some(c) = caption {
        m["caption"] = json!(c);
    }
    json!({"update_id": 7, "message": m})
}

fn ann() -> Value {
    json!({"id": 42, "is_bot": false, "first_name": "Ann"})
}

fn converted(raw: Value) -> crate::InboundMessage {
    let update = parse_update(raw.clone()).expect("an update");
    match convert(&update, &me()) {
        Converted::Message(m) => *m,
        other => panic!("not a message: {other:?} from {raw}"),
    }
}

/// Catches: a voice note without `mime_type` (optional in the Bot API) read by teloxide as
/// an empty message and dropped without a word — what happened before the repair.
#[test]
fn a_voice_note_without_mime_type_is_a_voice_note() {
    let voice = json!({"file_id": "v", "file_unique_id": "uv", "file_size": 3, "duration": 2});
    let raw = update("voice", voice, ann(), None);
    // teloxide alone: the message is empty (the quirk this module exists for).
    let plain: Update = serde_json::from_str(&raw.to_string()).expect("an update");
    match plain.kind {
        teloxide::types::UpdateKind::Message(m) => {
            assert!(matches!(m.kind, MessageKind::Empty {}))
        }
        other => panic!("{other:?}"),
    }
    let m = converted(raw);
    assert_eq!(
        (
            m.media.len(),
            m.media[0].kind,
            m.media[0].name.as_deref(),
            m.media[0].mime.as_deref(),
            m.text.as_str()
        ),
        (
            1,
            MediaKind::Voice,
            Some("voice_9.ogg"),
            Some("audio/ogg"),
            ""
        )
    );
}

/// Catches: an audio file, a video or a voice note whose type teloxide cannot parse lost;
/// a reply to such a message losing the reply's own text.
#[test]
fn unreadable_types_become_none_and_nested_messages_are_repaired() {
    let meta = json!({"file_id": "a", "file_unique_id": "ua", "file_size": 5, "duration": 2, "width": 4, "height": 4});
    for (field, kind) in [("audio", MediaKind::Audio), ("video", MediaKind::Video)] {
        let m = converted(update(field, meta.clone(), ann(), Some("listen")));
        assert_eq!((m.media[0].kind, m.text.as_str()), (kind, "listen"));
    }
    let mut bad = meta.clone();
    bad["mime_type"] = json!("not a type");
    let m = converted(update("voice", bad, ann(), None));
    assert_eq!(m.media[0].mime.as_deref(), Some("audio/ogg"));

    // A text message replying to a caption-less voice note without a type.
    let replied = update("voice", meta, ann(), None)["message"].clone();
    let raw = json!({"update_id": 8, "message": {
        "message_id": 10, "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
        "from": ann(), "text": "about that", "reply_to_message": replied,
    }});
    assert_eq!(converted(raw).text, "about that");
}

/// Catches: an update without `update_id` taken (it cannot be acknowledged); a hostile
/// nesting recursed without bound.
#[test]
fn an_update_without_an_id_is_none_and_deep_nesting_is_bounded() {
    assert!(parse_update(json!({"message": {}})).is_none());
    assert!(parse_update(json!({"update_id": "7"})).is_none());
    let mut deep =
        json!({"message_id": 1, "date": 1, "chat": {"id": 1, "type": "private"}, "text": "x"});
    for _ in 0..100 {
        deep = json!({"message_id": 1, "date": 1, "chat": {"id": 1, "type": "private"}, "text": "x", "reply_to_message": deep});
    }
    let mut raw = json!({"update_id": 1, "message": deep});
    repair_update(&mut raw); // bounded: returns
}

fn mime() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        "[a-z]{1,8}/[a-z0-9.+-]{1,12}".prop_map(Some),
        any::<String>().prop_map(Some),
    ]
}

fn sender() -> impl Strategy<Value = Value> {
    (
        any::<u32>(),
        proptest::option::of("[a-zA-Z0-9_]{5,32}"),
        ".{1,20}",
        proptest::option::of(".{1,20}"),
    )
        .prop_map(|(id, username, first, last)| {
            let mut u = json!({"id": u64::from(id) + 1, "is_bot": false, "first_name": first});
            if let Some(n) = username {
                u["username"] = json!(n);
            }
            if let Some(l) = last {
                u["last_name"] = json!(l);
            }
            u
        })
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: any voice note, audio, video, document or photo a user can send (with or
    /// without a type, any type string, with or without a username or caption) not
    /// arriving as exactly one file of its kind, or the repair panicking.
    #[test]
    fn any_media_message_arrives_as_its_file(
        which in 0usize..5,
        mime in mime(),
        size in any::<u32>(),
        from in sender(),
        caption in proptest::option::of(".{0,20}"),
    ) {
        let (field, kind) = [
            ("voice", MediaKind::Voice),
            ("audio", MediaKind::Audio),
            ("video", MediaKind::Video),
            ("document", MediaKind::Document),
            ("photo", MediaKind::Photo),
        ][which];
        let mut meta = json!({"file_id": "f", "file_unique_id": "uf", "file_size": size, "duration": 1, "width": 2, "height": 2});
        if let Some(t) = mime {
            meta["mime_type"] = json!(t);
        }
        if field == "photo" {
            meta = json!([meta]);
        }
        let update = parse_update(update(field, meta, from, caption.as_deref()));
        prop_assert!(update.is_some());
        match convert(&update.unwrap_or_else(|| unreachable!()), &me()) {
            Converted::Message(m) => {
                prop_assert_eq!(m.media.len(), 1);
                prop_assert_eq!(m.media[0].kind, kind);
                prop_assert_eq!(m.media[0].size, Some(u64::from(size)));
                prop_assert_eq!(m.text, caption.unwrap_or_default());
            }
            other => return Err(TestCaseError::fail(format!("{other:?}"))),
        }
    }
}
