//! Media through Discord end to end (docs/media.md): an image attachment without text
//! lands in the agent's `inbox/` and reaches the model as an image part; the agent sends
//! a file back with `message` `path` (create message, multipart `files[0]`, the same
//! bytes); an attachment whose URL is off Discord's CDN (and off the configured base) is
//! refused, never fetched.

use serde_json::json;
use switchboard_testkit::fake_discord::{DUser, FakeDiscord};
use switchboard_testkit::fake_model::{images_of, FakeModel, Step};

use crate::common::{start, WAIT};
use crate::media_telegram::jpeg;

const TOKEN: &str = "discord-test-token";

/// Catches: attachments ignored (or dropped without text), a file the agent sends not
/// uploaded, and an attachment URL pointing anywhere being fetched (SSRF).
#[tokio::test]
async fn attachments_come_in_files_go_out_and_crafted_urls_are_refused() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let gw = start(
        &fake,
        json!({"channels": {"discord": {"enabled": true, "token": TOKEN, "apiUrl": dc.api_url(), "allowFrom": ["42"]}}}),
    )
    .await;
    dc.wait_ready(1, WAIT).await.unwrap();
    let ann = DUser::new(42, "ann");
    let picture = jpeg(64 * 1024);
    fake.push(Step::tool_call(
        "message",
        r#"{"path": "inbox/cat.jpg", "text": "your cat", "asPhoto": false}"#,
    ));
    fake.push(Step::text("sent"));
    dc.dm_message_with_files(
        ann.clone(),
        "",
        vec![("cat.jpg".into(), "image/jpeg".into(), picture.clone())],
    );
    let sent = dc.wait_for_sent(2, WAIT).await.unwrap();
    let with_file = sent
        .iter()
        .find(|m| !m.attachments.is_empty())
        .expect("a message with the file");
    assert_eq!(
        (
            with_file.content.as_str(),
            with_file.attachments[0].filename.as_deref(),
            with_file.attachments[0].bytes.len()
        ),
        ("your cat", Some("cat.jpg"), picture.len())
    );
    assert!(with_file.attachments[0].bytes == picture);
    assert!(std::fs::read(gw.state_dir().join("workspace/inbox/cat.jpg")).unwrap() == picture);
    let first = &fake.requests()[0].body;
    assert_eq!(
        images_of(first),
        vec![("image/jpeg".to_string(), picture.len())]
    );

    // A crafted attachment URL (the fake model's own address: a host the gateway reaches,
    // but not Discord's CDN nor the configured base) is refused with a reply.
    let before = fake.requests().len();
    dc.dm_message_with_attachment_url(ann, "", &format!("{}/v1/models", fake.origin()));
    let sent = dc.wait_for_sent(3, WAIT).await.unwrap();
    assert_eq!(
        sent[2].content,
        "⚠️ secret.png was not received: refused: the attachment URL is not on Discord's CDN."
    );
    assert_eq!(fake.requests().len(), before, "nothing reached the agent");
    assert!(!gw.state_dir().join("workspace/inbox/secret.png").exists());
    fake.assert_no_violations();
    dc.assert_no_violations();
}
