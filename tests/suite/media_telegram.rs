//! Media through Telegram end to end (docs/media.md): a photo lands in the agent's
//! `inbox/`, reaches the model as an image part, and the agent sends it back with
//! `message` `path` (`sendPhoto`, multipart, the same bytes; the gateway's copy is removed
//! once delivered); a document without a
//! caption reaches the agent; a voice note is transcribed through the fake model's
//! `/audio/transcriptions`; a file over `media.maxBytes` is refused with a reply; a model
//! marked `input: ["text"]` gets the note only.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{images_of, FakeModel, Step};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};

use crate::common::WAIT;
use crate::telegram::{ann, TOKEN};

/// Bytes that start like a JPEG (what the gateway reads the type from), `n` long.
pub(crate) fn jpeg(n: usize) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0];
    b.extend((0..n.saturating_sub(4)).map(|i| (i % 251) as u8));
    b
}

/// The outgoing copies (`<state>/media/out/<id>`) still on disk.
pub(crate) fn copies_left(state_dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(state_dir.join("media/out"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The text of the last user message of a recorded OpenAI request.
fn last_user_text(body: &Value) -> String {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let m = msgs
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap_or(Value::Null);
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Catches: a photo dropped or reduced to its caption, the image not reaching the model,
/// the agent unable to send a file back (or its copy kept after delivery), a caption-less
/// document or a voice note lost.
#[tokio::test]
async fn a_photo_goes_to_the_model_and_back_and_documents_and_voice_notes_arrive() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let gw = crate::common::start(
        &fake,
        json!({
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": ["42"], "pollTimeoutSeconds": 1}},
            "media": {"audio": {"model": "fake/whisper-1"}}
        }),
    )
    .await;
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    let photo = jpeg(300 * 1024);
    fake.push_for(
        "what is this?",
        Step::tool_call(
            "message",
            r#"{"path": "inbox/photo_1.jpg", "text": "here it is"}"#,
        ),
    );
    fake.push_for("what is this?", Step::text("sent it back"));
    tg.user_file(
        Chat::private(42),
        ann(),
        "photo",
        photo.clone(),
        json!({}),
        "what is this?",
    );
    let files = tg.wait_for_files(1, WAIT).await.unwrap();
    assert_eq!(
        (
            files[0].method.as_str(),
            files[0].chat_id,
            files[0].file_name.as_deref(),
            files[0].caption.as_deref(),
            files[0].bytes.len()
        ),
        (
            "sendPhoto",
            42,
            Some("photo_1.jpg"),
            Some("here it is"),
            photo.len()
        )
    );
    assert!(
        files[0].bytes == photo,
        "the bytes sent back are the photo's"
    );
    let stored = std::fs::read(gw.state_dir().join("workspace/inbox/photo_1.jpg")).unwrap();
    assert!(stored == photo, "the inbox holds the photo as sent");
    let first = &fake.requests()[0].body;
    assert_eq!(
        images_of(first),
        vec![("image/jpeg".to_string(), photo.len())]
    );
    assert_eq!(
        last_user_text(first),
        "what is this?\n[photo received: inbox/photo_1.jpg (image/jpeg, 300 KB)]"
    );
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "sent it back");
    // The reply left after the photo's row was delivered, its state committed and its
    // copy removed (a chat's rows leave in order): no copy is left behind.
    assert_eq!(copies_left(gw.state_dir()), Vec::<String>::new());

    // A document without a caption, its name hostile: it still reaches the agent.
    tg.user_file(
        Chat::private(42),
        ann(),
        "document",
        b"%PDF-1.7 report".to_vec(),
        json!({"file_name": "../../.report.pdf", "mime_type": "application/pdf"}),
        "",
    );
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(
        sent[1].plain_text,
        "echo: [file received: inbox/report.pdf (application/pdf, 15 bytes)]"
    );
    assert!(gw.state_dir().join("workspace/inbox/report.pdf").is_file());

    // A voice note: transcribed, the words are the message.
    tg.user_file(
        Chat::private(42),
        ann(),
        "voice",
        b"OggS voice bytes".to_vec(),
        json!({"duration": 2, "mime_type": "audio/ogg"}),
        "",
    );
    let sent = tg.wait_for_sent(3, WAIT).await.unwrap();
    assert_eq!(
        sent[2].plain_text,
        "echo: [voice note received: inbox/voice_6.ogg (audio/ogg, 16 bytes); transcript below]\ntranscript of voice_6.ogg (16 bytes)"
    );
    let t = fake.transcriptions();
    assert_eq!(
        (t.len(), t[0].model.as_str(), t[0].bytes),
        (1, "whisper-1", 16)
    );
    // The photo's turn is still among the latest three with images: it is sent again.
    let last = fake.requests().last().unwrap().body.clone();
    assert_eq!(images_of(&last).len(), 1);
    fake.assert_no_violations();
    tg.assert_no_violations();
}

/// Catches: a file over `media.maxBytes` taken anyway or refused in silence, and a
/// refusal losing the caption that came with it; a text-only model sent an image.
#[tokio::test]
async fn oversized_files_are_refused_with_a_reply_and_text_only_models_get_the_note() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let _gw = crate::common::start(
        &fake,
        json!({
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": ["42"], "pollTimeoutSeconds": 1}},
            "media": {"maxBytes": 65536},
            "models": {"providers": {"fake": {"models": [{"id": "scripted", "input": ["text"]}]}}}
        }),
    )
    .await;
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    tg.user_file(
        Chat::private(42),
        ann(),
        "document",
        vec![1u8; 100 * 1024],
        json!({"file_name": "big.bin"}),
        "",
    );
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        sent[0].plain_text,
        "⚠️ big.bin was not received: it is larger than the 64 KB limit (media.maxBytes)."
    );
    // With a caption, the caption and the refusal's note reach the agent.
    tg.user_file(
        Chat::private(42),
        ann(),
        "document",
        vec![1u8; 100 * 1024],
        json!({"file_name": "big.bin"}),
        "see attached",
    );
    let sent = tg.wait_for_sent(3, WAIT).await.unwrap();
    let texts: Vec<&str> = sent.iter().map(|s| s.plain_text.as_str()).collect();
    assert!(
        texts.contains(&"echo: see attached\n[file refused: big.bin (it is larger than the 64 KB limit (media.maxBytes))]"),
        "{texts:?}"
    );
    // A photo to a text-only model: the note only.
    tg.user_file(
        Chat::private(42),
        ann(),
        "photo",
        jpeg(2048),
        json!({}),
        "look",
    );
    let sent = tg.wait_for_sent(4, WAIT).await.unwrap();
    assert_eq!(
        sent[3].plain_text,
        "echo: look\n[photo received: inbox/photo_6.jpg (image/jpeg, 2 KB)]"
    );
    let last = fake.requests().last().unwrap().body.clone();
    assert!(images_of(&last).is_empty(), "no image to a text-only model");
    assert!(
        fake.requests().len() == 2,
        "the refused file alone reached no agent"
    );
    fake.assert_no_violations();
}

/// Catches: a caption-less photo from a user without a username, and a voice note without
/// `mime_type` (optional in the Bot API), dropped without a word — teloxide 0.17 reads a
/// voice note without a type as an empty message; the adapter repairs the update first.
#[tokio::test]
async fn a_captionless_photo_without_username_and_a_voice_note_without_a_type_arrive() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let gw = crate::common::start(
        &fake,
        json!({
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(), "allowFrom": ["42"], "pollTimeoutSeconds": 1}}
        }),
    )
    .await;
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    let nameless = User::new(42, "", "Ann");
    let photo = jpeg(4096);
    tg.user_file(
        Chat::private(42),
        nameless.clone(),
        "photo",
        photo.clone(),
        json!({}),
        "",
    );
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(
        sent[0].plain_text,
        "echo: [photo received: inbox/photo_1.jpg (image/jpeg, 4 KB)]"
    );
    assert_eq!(
        images_of(&fake.requests()[0].body),
        vec![("image/jpeg".to_string(), photo.len())]
    );
    tg.user_file(
        Chat::private(42),
        nameless,
        "voice",
        b"OggS voice bytes".to_vec(),
        json!({"duration": 2}),
        "",
    );
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(
        sent[1].plain_text,
        "echo: [voice note received: inbox/voice_3.ogg (audio/ogg, 16 bytes)]"
    );
    let stored = std::fs::read(gw.state_dir().join("workspace/inbox/voice_3.ogg")).unwrap();
    assert_eq!(stored, b"OggS voice bytes");
    fake.assert_no_violations();
    tg.assert_no_violations();
}
