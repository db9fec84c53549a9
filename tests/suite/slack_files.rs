//! Files people send on Slack end to end (docs/slack.md, docs/media.md): a photo shared
//! without text lands in the agent's `inbox/` and reaches the model as an image part; a
//! document lands under its name with the message's text and a note; a voice clip shared
//! in the bot's thread is transcribed; a Slack Connect file (`file_access:
//! "check_file_info"`) is fetched through `files.info`; every download carries the bot
//! token. A file over `media.maxBytes` (declared, or lied about) is refused with a reply;
//! a file URL off Slack's hosts, or a redirect, is never followed; a stranger's file and
//! an unaddressed file in a channel are never fetched.

use serde_json::json;
use switchboard_testkit::fake_model::{images_of, FakeModel};
use switchboard_testkit::fake_slack::{check_file_info, FakeSlack};

use crate::common::WAIT;
use crate::media_telegram::jpeg;
use crate::slack::{ann, eve, gateway_with, mention, post_with, APP_TOKEN, BOT_TOKEN, GENERAL};

/// Catches: a file-only message ignored, files dropped from a message with text, a file
/// fetched without the bot token (Slack refuses it), a Slack Connect file given up on
/// instead of asked of `files.info`, an image not reaching a vision model, a voice clip in
/// a thread not transcribed.
#[tokio::test]
async fn shared_files_land_in_the_inbox_and_photos_reach_the_model() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let audio = json!({"media": {"audio": {"model": "fake/whisper-1"}}});
    let gw = gateway_with(&fake, &sl, json!({}), audio).await;
    let inbox = gw.state_dir().join("workspace/inbox");

    // A photo alone, in a DM.
    let picture = jpeg(48 * 1024);
    let photo = sl.host_file(&ann(), "cat.jpg", "image/jpeg", picture.clone());
    sl.dm_with_files(&ann(), "", vec![photo]);
    let answer = post_with(&sl, "echo: [photo received: inbox/cat.jpg").await;
    assert_eq!(
        answer.text,
        "echo: [photo received: inbox/cat.jpg (image/jpeg, 48 KB)]"
    );
    assert!(std::fs::read(inbox.join("cat.jpg")).unwrap() == picture);
    let asked = fake
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("inbox/cat.jpg"))
        .unwrap();
    assert_eq!(
        images_of(&asked.body),
        vec![("image/jpeg".to_string(), picture.len())],
        "the model saw the photo"
    );

    // A document with text, mentioning the bot in a channel.
    let report = b"%PDF-1.4 quarterly".to_vec();
    let doc = sl.host_file(&ann(), "report.pdf", "application/pdf", report.clone());
    let top = sl.channel_message_with_files(GENERAL, &ann(), &mention("summarize this"), vec![doc]);
    let answer = post_with(&sl, "echo: summarize this").await;
    assert_eq!(answer.thread_ts.as_deref(), Some(top.as_str()));
    assert_eq!(
        answer.text,
        "echo: summarize this\n[file received: inbox/report.pdf (application/pdf, 18 bytes)]"
    );
    assert_eq!(std::fs::read(inbox.join("report.pdf")).unwrap(), report);

    // A voice clip in that thread (no mention needed there): transcribed.
    let mut clip = sl.host_file(
        &ann(),
        "clip.webm",
        "audio/webm",
        b"webm voice bytes".to_vec(),
    );
    clip["subtype"] = json!("slack_audio");
    sl.thread_reply_with_files(GENERAL, &top, &ann(), "", vec![clip]);
    let answer = post_with(&sl, "echo: [voice note received").await;
    assert_eq!(
        answer.text,
        "echo: [voice note received: inbox/clip.webm (audio/webm, 16 bytes); transcript below]\ntranscript of clip.webm (16 bytes)"
    );
    assert_eq!(answer.thread_ts.as_deref(), Some(top.as_str()));
    let t = fake.transcriptions();
    assert_eq!((t.len(), t[0].bytes), (1, 16));

    // A Slack Connect file: the event gives only its id; `files.info` gives its URL.
    let notes = sl.host_file(&ann(), "notes.txt", "text/plain", b"kumquat".to_vec());
    sl.dm_with_files(&ann(), "from a partner", vec![check_file_info(&notes)]);
    let answer = post_with(&sl, "echo: from a partner").await;
    assert_eq!(
        answer.text,
        "echo: from a partner\n[file received: inbox/file_1 (application/octet-stream, 7 bytes)]"
    );
    assert_eq!(std::fs::read(inbox.join("file_1")).unwrap(), b"kumquat");
    assert_eq!(
        sl.calls()
            .iter()
            .filter(|c| c.method == "files.info")
            .count(),
        1
    );

    let downloads = sl.downloads();
    assert_eq!(downloads.len(), 4, "{downloads:?}");
    assert!(
        downloads.iter().all(|d| d.authorized && d.status == 200),
        "{downloads:?}"
    );
    sl.wait_all_acked(WAIT).await.unwrap();
    sl.assert_no_violations();
    fake.assert_no_violations();
}

/// Catches: a file past `media.maxBytes` taken (or its size lie believed, or refused in
/// silence); a crafted URL off Slack's hosts fetched with the bot token (SSRF, a leaked
/// token), or a redirect off them followed; a stranger's file, or a file in a channel not addressed to the bot, fetched.
#[tokio::test]
async fn oversized_foreign_and_unwanted_files_are_not_fetched() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let gw = gateway_with(&fake, &sl, json!({}), json!({"media": {"maxBytes": 65536}})).await;
    let inbox = gw.state_dir().join("workspace/inbox");
    let too_big =
        "⚠️ big.bin was not received: it is larger than the 64 KB limit (media.maxBytes).";

    // Declared over the limit: refused before any download.
    let big = sl.host_file(
        &ann(),
        "big.bin",
        "application/octet-stream",
        vec![1u8; 100 * 1024],
    );
    sl.dm_with_files(&ann(), "", vec![big]);
    post_with(&sl, too_big).await;
    assert_eq!(sl.downloads(), vec![], "not fetched");

    // Declared small but 100 KB: the download stops at the limit.
    let mut liar = sl.host_file(
        &ann(),
        "big.bin",
        "application/octet-stream",
        vec![2u8; 100 * 1024],
    );
    liar["size"] = json!(1000);
    sl.dm_with_files(&ann(), "", vec![liar]);
    sl.wait_posted(2, WAIT).await.unwrap();
    let texts: Vec<String> = sl.posted().into_iter().map(|p| p.text).collect();
    assert_eq!(texts, vec![too_big.to_string(), too_big.to_string()]);
    assert_eq!(sl.downloads().len(), 1);
    assert!(
        !inbox.join("big.bin").exists(),
        "nothing half-written stays"
    );

    // A URL on another host (the fake model's: reachable, but not Slack's; any request to
    // that path would be a violation of the fake model).
    let before = fake.requests().len();
    let mut foreign = sl.host_file(&ann(), "secret.png", "image/png", jpeg(1024));
    let elsewhere = format!("{}/stolen/secret.png", fake.origin());
    foreign["url_private"] = json!(elsewhere);
    foreign["url_private_download"] = json!(elsewhere);
    sl.dm_with_files(&ann(), "", vec![foreign]);
    post_with(&sl, "secret.png was not received").await;
    let last = sl.posted().pop().unwrap();
    assert_eq!(
        last.text,
        "⚠️ secret.png was not received: refused: the file URL is not on Slack's file host."
    );
    fake.assert_no_violations();
    assert!(!inbox.join("secret.png").exists());

    // A Slack URL answering with a redirect elsewhere: not followed.
    let moved = sl.host_file(&ann(), "moved.png", "image/png", jpeg(1024));
    sl.redirect_file(&moved, &elsewhere);
    sl.dm_with_files(&ann(), "", vec![moved]);
    post_with(&sl, "moved.png was not received").await;
    let last = sl.posted().pop().unwrap();
    assert_eq!(
        last.text,
        "⚠️ moved.png was not received: download failed: HTTP 302 Found."
    );
    fake.assert_no_violations();
    assert!(!inbox.join("moved.png").exists());

    // A stranger's DM, and Ann's file in a channel without a mention: never fetched.
    let eves = sl.host_file(&eve(), "eve.jpg", "image/jpeg", jpeg(1024));
    sl.dm_with_files(&eve(), "look", vec![eves]);
    let unaddressed = sl.host_file(&ann(), "chat.jpg", "image/jpeg", jpeg(1024));
    sl.channel_message_with_files(GENERAL, &ann(), "look", vec![unaddressed]);
    sl.wait_all_acked(WAIT).await.unwrap();
    assert_eq!(sl.downloads().len(), 2, "{:?}", sl.downloads());
    assert_eq!(sl.posted().len(), 4, "{:?}", sl.posted());
    assert_eq!(fake.requests().len(), before, "nothing reached the agent");
    assert!(!inbox.join("eve.jpg").exists() && !inbox.join("chat.jpg").exists());
    sl.assert_no_violations();
    fake.assert_no_violations();
}
