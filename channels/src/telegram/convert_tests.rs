//! Tests of the Telegram update conversion: examples, and properties over arbitrary updates
//! (deserialized by teloxide from generated Bot API JSON).

use proptest::prelude::*;
use serde_json::{json, Value};
use teloxide::types::Update;

use super::*;

const BOT: &str = "switchboard_bot";
const BOT_ID: u64 = 1000;

fn me() -> BotInfo {
    BotInfo {
        id: BOT_ID,
        username: BOT.to_string(),
        commands: vec![
            crate::MenuCommand::new("subagents", "Sub-agents"),
            crate::MenuCommand::new("status", "Status"),
            crate::MenuCommand::new("stop", "Stop"),
            crate::MenuCommand::new("new", "New").alias("reset"),
        ],
    }
}

/// Parse as Telegram's JSON text (as teloxide reads it: its update kinds need borrowed keys,
/// which `from_value` does not give).
fn parse(json: &Value) -> Update {
    serde_json::from_str(&json.to_string()).expect("teloxide reads any update")
}

fn update(message: Value) -> Update {
    parse(&json!({"update_id": 7, "message": message}))
}

fn group_message(text: &str) -> Value {
    json!({
        "message_id": 3, "date": 1_700_000_000,
        "chat": {"id": -5, "type": "group", "title": "team"},
        "from": {"id": 42, "is_bot": false, "first_name": "Ann", "username": "ann"},
        "text": text,
    })
}

fn converted(message: Value) -> InboundMessage {
    match convert(&update(message), &me()) {
        Converted::Message(m) => *m,
        other => panic!("not a message: {other:?}"),
    }
}

/// Catches: finding the mention in `text.to_lowercase()` and cutting the original text at
/// that offset — `İ` lowercases to three bytes, so this text panicked the polling task.
#[test]
fn a_mention_after_a_letter_whose_lowercase_is_longer_is_removed() {
    let m = converted(group_message("İ @switchboard_bot"));
    assert!(m.addressed);
    assert_eq!(m.text, "İ");
    let m = converted(group_message("İİİ ask @SwitchBoard_Bot about ẞ"));
    assert!(m.addressed);
    assert_eq!(m.text, "İİİ ask about ẞ");
}

#[test]
fn only_a_whole_word_mention_of_the_bot_addresses_it() {
    assert!(!converted(group_message("@switchboard_bot_fan hi")).addressed);
    assert!(!converted(group_message("mail@switchboard_bot")).addressed);
    let m = converted(group_message("hey @SWITCHBOARD_BOT, and @switchboard_bot!"));
    assert!(m.addressed);
    assert_eq!(m.text, "hey , and !");
    // A command for this bot loses its `@bot` suffix (routing takes a suffixed name for
    // another bot's command) and keeps the rest of its text whole.
    let m = converted(group_message("/status@switchboard_bot"));
    assert!(m.addressed);
    assert_eq!(m.text, "/status");
    let m = converted(group_message("/STOP@SwitchBoard_Bot  now @switchboard_bot"));
    assert!(m.addressed);
    assert_eq!(m.text, "/STOP  now @switchboard_bot");
}

/// Catches: any text starting with `/` taken as addressed to the bot in a group (a path,
/// another bot's command), which a group that asks for mentions would hand to the agent.
#[test]
fn only_this_bots_commands_address_it() {
    for text in [
        "/usr/bin/python3 crashed, why?",
        "/status@other_bot",
        "/frobnicate",
    ] {
        let m = converted(group_message(text));
        assert!(!m.addressed, "{text}");
        assert_eq!(m.text, text);
    }
    let m = converted(group_message(
        "/usr/bin/python3 crashed @switchboard_bot why?",
    ));
    assert!(m.addressed);
    assert_eq!(m.text, "/usr/bin/python3 crashed why?");
    let m = converted(group_message("/new"));
    assert!(m.addressed);
}

/// Catches: treating the topic-opening service message every forum message "replies" to
/// as a reply to the bot when the bot opened the topic.
#[test]
fn a_topic_opened_by_the_bot_does_not_address_every_message_in_it() {
    let mut msg = group_message("just chatting");
    msg["chat"] = json!({"id": -100_777, "type": "supergroup", "title": "f", "is_forum": true});
    msg["message_thread_id"] = json!(9);
    msg["is_topic_message"] = json!(true);
    msg["reply_to_message"] = json!({
        "message_id": 9, "date": 1_700_000_000,
        "chat": {"id": -100_777, "type": "supergroup", "title": "f", "is_forum": true},
        "from": {"id": BOT_ID, "is_bot": true, "first_name": "Switchboard", "username": BOT},
        "message_thread_id": 9, "is_topic_message": true,
        "forum_topic_created": {"name": "t", "icon_color": 7_322_096},
    });
    let m = converted(msg.clone());
    assert!(!m.addressed);
    assert_eq!(m.origin.thread_id.as_deref(), Some("9"));
    msg["reply_to_message"] = json!({
        "message_id": 12, "date": 1_700_000_000,
        "chat": {"id": -100_777, "type": "supergroup", "title": "f", "is_forum": true},
        "from": {"id": BOT_ID, "is_bot": true, "first_name": "Switchboard", "username": BOT},
        "text": "an answer",
    });
    assert!(converted(msg).addressed);
}

#[test]
fn an_unreadable_message_is_reported_and_other_kinds_ignored() {
    let broken = parse(&json!({"update_id": 8, "message": {"message_id": "x", "chat": 5}}));
    assert!(matches!(convert(&broken, &me()), Converted::Unreadable(_)));
    let other = parse(&json!({"update_id": 9, "edited_message": {
        "message_id": 3, "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"}, "text": "x",
    }}));
    assert!(matches!(convert(&other, &me()), Converted::Ignored));
}

/// Independent check: does `text` mention `@BOT` (any ASCII case) as a whole word?
fn mentions_bot(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let name: Vec<char> = BOT.chars().collect();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    (0..chars.len()).any(|i| {
        chars[i] == '@'
            && (i == 0 || !word(chars[i - 1]))
            && chars.len() > i + name.len()
            && chars[i + 1..=i + name.len()]
                .iter()
                .zip(&name)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
            && chars.get(i + 1 + name.len()).is_none_or(|&c| !word(c))
    })
}

/// `@switchboard_bot` in a random mix of upper and lower case.
fn bot_mention() -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<bool>(), BOT.len()).prop_map(|upper| {
        let name: String = BOT
            .chars()
            .zip(upper)
            .map(|(c, up)| if up { c.to_ascii_uppercase() } else { c })
            .collect();
        format!("@{name}")
    })
}

/// Text of arbitrary Unicode mixed with what the conversion looks at: mentions (of the bot,
/// in any case, or of longer names), commands, and letters whose case mapping changes length.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => any::<char>().prop_map(String::from),
            2 => Just(" ".to_string()),
            2 => bot_mention(),
            1 => Just("@switchboard_botx".to_string()),
            1 => Just("@".to_string()),
            1 => Just("/status".to_string()),
            1 => Just("/stop@switchboard_bot".to_string()),
            1 => prop::sample::select(vec!["İ", "ẞ", "\u{212A}", "ǅ", "ﬀ", "🙂", "\u{0301}"])
                .prop_map(String::from),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

/// Message entities with arbitrary offsets and lengths (UTF-16 units on Telegram's side).
fn entities() -> impl Strategy<Value = Value> {
    proptest::collection::vec(
        (
            prop::sample::select(vec!["mention", "bot_command", "bold", "url", "hashtag"]),
            0u32..70_000,
            0u32..70_000,
        )
            .prop_map(
                |(kind, offset, length)| json!({"type": kind, "offset": offset, "length": length}),
            ),
        0..4,
    )
    .prop_map(Value::Array)
}

fn user() -> impl Strategy<Value = Value> {
    (
        1i64..1_000_000_000_000,
        prop::bool::weighted(0.1),
        ".{0,12}",
        proptest::option::of("[A-Za-z0-9_]{1,32}"),
    )
        .prop_map(|(id, is_bot, first_name, username)| {
            let mut u = json!({"id": id, "is_bot": is_bot, "first_name": first_name});
            if let Some(name) = username {
                u["username"] = json!(name);
            }
            u
        })
}

#[derive(Debug, Clone, Copy)]
enum ChatShape {
    Private,
    Group,
    Supergroup,
    Forum,
}

fn chat_json(shape: ChatShape, from_id: i64) -> Value {
    match shape {
        ChatShape::Private => json!({"id": from_id, "type": "private", "first_name": "P"}),
        ChatShape::Group => json!({"id": -4001, "type": "group", "title": "g"}),
        ChatShape::Supergroup => {
            json!({"id": -1_001_234_567_890i64, "type": "supergroup", "title": "s"})
        }
        ChatShape::Forum => {
            json!({"id": -1_009_876_543_210i64, "type": "supergroup", "title": "f", "is_forum": true})
        }
    }
}

/// What the message replies to: nothing, the bot, someone else, or a topic's opening.
#[derive(Debug, Clone, Copy)]
enum ReplyTo {
    Nothing,
    Bot,
    Someone,
    TopicOpenedByBot,
}

#[derive(Debug, Clone)]
struct Case {
    json: Value,
    text: String,
    shape: ChatShape,
    from: Value,
    reply: ReplyTo,
}

fn case() -> impl Strategy<Value = Case> {
    (
        text(),
        any::<bool>(),
        entities(),
        prop::sample::select(vec![
            ChatShape::Private,
            ChatShape::Group,
            ChatShape::Supergroup,
            ChatShape::Forum,
        ]),
        user(),
        prop::sample::select(vec![
            ReplyTo::Nothing,
            ReplyTo::Bot,
            ReplyTo::Someone,
            ReplyTo::TopicOpenedByBot,
        ]),
        1i32..1_000_000,
    )
        .prop_map(|(text, caption, entities, shape, from, reply, thread)| {
            let chat = chat_json(shape, from["id"].as_i64().unwrap_or(1));
            let mut m = json!({"message_id": 77, "date": 1_700_000_000, "chat": chat, "from": from});
            if caption {
                m["photo"] = json!([{"file_id": "f", "file_unique_id": "u", "width": 1, "height": 1}]);
                m["caption"] = json!(text);
                m["caption_entities"] = entities;
            } else {
                m["text"] = json!(text);
                m["entities"] = entities;
            }
            if matches!(shape, ChatShape::Forum) {
                m["message_thread_id"] = json!(thread);
                m["is_topic_message"] = json!(true);
            }
            let bot = json!({"id": BOT_ID, "is_bot": true, "first_name": "Switchboard", "username": BOT});
            let replied = |from: Value| {
                json!({"message_id": 5, "date": 1_700_000_000, "chat": m["chat"], "from": from, "text": "earlier"})
            };
            match reply {
                ReplyTo::Nothing => {}
                ReplyTo::Bot => m["reply_to_message"] = replied(bot),
                ReplyTo::Someone => {
                    m["reply_to_message"] =
                        replied(json!({"id": 9, "is_bot": false, "first_name": "Zed"}))
                }
                ReplyTo::TopicOpenedByBot => {
                    let mut opened = replied(bot);
                    opened["forum_topic_created"] = json!({"name": "t", "icon_color": 7_322_096});
                    if let Some(o) = opened.as_object_mut() {
                        o.remove("text");
                    }
                    m["reply_to_message"] = opened;
                }
            }
            let from = m["from"].clone();
            Case {
                json: json!({"update_id": 1, "message": m}),
                text,
                shape,
                from,
                reply,
            }
        })
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: any panic in the conversion (a poison message kills the polling task), and
    /// a mention of the bot in any case not addressing it or left in the text.
    #[test]
    fn any_update_converts_without_panic_and_mentions_address_the_bot(c in case()) {
        let update = parse(&c.json);
        let out = convert(&update, &me());
        if c.from["is_bot"] == true {
            prop_assert!(matches!(out, Converted::Ignored), "{out:?}");
            return Ok(());
        }
        let Converted::Message(m) = out else {
            return Err(TestCaseError::fail(format!("not converted: {out:?}")));
        };
        prop_assert_eq!(m.sender_username.as_deref(), c.from["username"].as_str());
        prop_assert_eq!(&m.sender_id, &c.from["id"].as_i64().unwrap_or(0).to_string());
        let direct = matches!(c.shape, ChatShape::Private);
        prop_assert_eq!(m.origin.kind == ChatKind::Direct, direct);
        prop_assert_eq!(m.origin.thread_id.is_some(), matches!(c.shape, ChatShape::Forum));
        if direct || mentions_bot(&c.text) || matches!(c.reply, ReplyTo::Bot) {
            prop_assert!(m.addressed, "{m:?}");
        }
        if !direct && !mentions_bot(&c.text) && !c.text.starts_with('/')
            && !matches!(c.reply, ReplyTo::Bot) {
            prop_assert!(!m.addressed, "{m:?}");
        }
        if !c.text.starts_with('/') {
            prop_assert!(!mentions_bot(&m.text), "mention left in {:?}", m.text);
        }
    }

    /// The mention finder's ranges lie on char boundaries and name the bot.
    #[test]
    fn mention_ranges_are_char_boundaries(t in text()) {
        for r in mentions(&t, BOT) {
            prop_assert!(t.is_char_boundary(r.start) && t.is_char_boundary(r.end));
            prop_assert!(t[r.start + 1..r.end].eq_ignore_ascii_case(BOT));
        }
        prop_assert_eq!(!mentions(&t, BOT).is_empty(), mentions_bot(&t));
    }
}

fn converted_or(message: Value, what: &str) -> InboundMessage {
    let update = update(message.clone());
    match convert(&update, &me()) {
        Converted::Message(m) => *m,
        other => panic!(
            "{what} not a message: {other:?} from {message} as {:?}",
            update.kind
        ),
    }
}

fn private_media(field: &str, media: Value, caption: Option<&str>) -> Value {
    let mut m = json!({
        "message_id": 9, "date": 1_700_000_000,
        "chat": {"id": 42, "type": "private", "first_name": "Ann"},
        "from": {"id": 42, "is_bot": false, "first_name": "Ann", "username": "ann"},
    });
    m[field] = media;
    if let Some(c) = caption {
        m["caption"] = json!(c);
    }
    m
}

/// Catches: a photo or file without a caption dropped (it was, silently), the small
/// thumbnail taken instead of the photo, a caption lost when media is present.
#[test]
fn photos_files_and_voice_notes_convert_with_or_without_a_caption() {
    let meta = |id: &str, size: u64| json!({"file_id": id, "file_unique_id": format!("u{id}"), "file_size": size});
    let mut small = meta("small", 100);
    small["width"] = json!(90);
    small["height"] = json!(90);
    let mut big = meta("big", 5000);
    big["width"] = json!(1280);
    big["height"] = json!(960);
    let m = converted_or(private_media("photo", json!([small, big]), None), "photo");
    assert_eq!(m.text, "");
    assert_eq!(
        m.media,
        vec![crate::MediaRef {
            kind: crate::MediaKind::Photo,
            source: "big".into(),
            name: Some("photo_9.jpg".into()),
            mime: Some("image/jpeg".into()),
            size: Some(5000),
        }]
    );
    let mut doc = meta("d", 7);
    doc["file_name"] = json!("../notes.txt");
    doc["mime_type"] = json!("text/plain");
    let m = converted_or(
        private_media("document", doc, Some("read this")),
        "document",
    );
    assert_eq!(m.text, "read this");
    assert_eq!(
        (
            m.media[0].kind,
            m.media[0].name.as_deref(),
            m.media[0].mime.as_deref()
        ),
        (
            crate::MediaKind::Document,
            Some("../notes.txt"),
            Some("text/plain")
        )
    );
    let mut voice = meta("v", 3);
    voice["duration"] = json!(2);
    voice["mime_type"] = json!("audio/ogg");
    let m = converted_or(private_media("voice", voice, None), "voice");
    assert_eq!(
        (
            m.media[0].kind,
            m.media[0].name.as_deref(),
            m.media[0].mime.as_deref()
        ),
        (
            crate::MediaKind::Voice,
            Some("voice_9.ogg"),
            Some("audio/ogg")
        )
    );
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic on any document a sender can shape (name, type, size), and a file
    /// message not converted.
    #[test]
    fn any_document_converts(name in any::<String>(), mime in "[a-z]{1,8}/[a-z0-9.+-]{1,12}", size in any::<u32>(), caption in proptest::option::of(".{0,20}")) {
        let doc = json!({"file_id": "x", "file_unique_id": "ux", "file_size": size, "file_name": name, "mime_type": mime});
        let update = parse(&json!({"update_id": 7, "message": private_media("document", doc, caption.as_deref())}));
        match convert(&update, &me()) {
            Converted::Message(m) => {
                prop_assert_eq!(m.media.len(), 1);
                prop_assert_eq!(m.media[0].size, Some(u64::from(size)));
            }
            other => return Err(TestCaseError::fail(format!("{other:?}"))),
        }
    }
}
