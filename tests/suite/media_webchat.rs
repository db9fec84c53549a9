//! Files through the web chat end to end (docs/media.md): a browser uploads a file over
//! HTTP with the token and names it in its `message` frame; it lands in the agent's
//! `inbox/` (name sanitized) and reaches the model as an image part with the text; the
//! agent sends it back with `message` `path`, the socket gets a `file` frame, and the
//! token-protected download answers the same bytes as an attachment. The upload route
//! refuses a caller without the token and a body over `media.maxBytes`.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{images_of, FakeModel, Step};

use crate::common::{chat, start, WAIT};
use crate::media_telegram::jpeg;

/// `POST /api/webchat/uploads` with the daemon's token: status and JSON answer.
async fn upload(gw: &switchboard_testkit::harness::Gateway, body: reqwest::Body) -> (u16, Value) {
    let r = gw
        .http()
        .post(format!("{}/api/webchat/uploads", gw.base_url()))
        .body(body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

/// Catches: an upload not reaching the agent (or reaching it without its note or image
/// part), its name kept unsanitized, the agent unable to send a file to the web chat, a
/// download serving other bytes, a renderable type, or a path from the client.
#[tokio::test]
async fn an_upload_reaches_the_agent_and_its_file_downloads_back() {
    let fake = FakeModel::start().await.unwrap();
    // Larger than `gateway.maxBodyBytes` (1 MiB): uploads are capped by `media.maxBytes`.
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    let photo = jpeg(1536 * 1024);
    let (status, up) = upload(&gw, photo.clone().into()).await;
    assert_eq!(
        (status, up["size"].as_u64()),
        (200, Some(1536 * 1024)),
        "{up}"
    );
    let id = up["id"].as_str().unwrap().to_string();
    fake.push_for(
        "look at this",
        Step::tool_call(
            "message",
            r#"{"path": "inbox/cat.jpg", "text": "here it is"}"#,
        ),
    );
    fake.push_for("look at this", Step::text("sent it back"));
    ws.send_raw(
        &json!({"type": "message", "text": "look at this", "files": [{"id": id, "name": "../../.cat.jpg", "mime": "image/jpeg"}]})
            .to_string(),
    )
    .await
    .unwrap();
    let file = ws.next_of_type("file", WAIT).await.unwrap();
    assert_eq!(
        (file["file"]["name"].as_str(), file["file"]["size"].as_u64()),
        (Some("cat.jpg"), Some(1536 * 1024))
    );
    let stored = std::fs::read(gw.state_dir().join("workspace/inbox/cat.jpg")).unwrap();
    assert!(stored == photo, "the inbox holds the upload as sent");
    let first = &fake.requests()[0].body;
    assert_eq!(
        images_of(first),
        vec![("image/jpeg".to_string(), photo.len())]
    );
    let user = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    let text: Vec<&str> = user["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(
        text,
        vec!["look at this\n[photo received: inbox/cat.jpg (image/jpeg, 1.5 MB)]"]
    );
    // The staged upload was taken (an upload feeds one message).
    assert!(!gw.state_dir().join("media/webchat").join(&id).exists());

    // The download: the same bytes, an attachment of a type no browser renders.
    let url = format!(
        "{}/api/webchat/files/{}",
        gw.base_url(),
        file["file"]["id"].as_str().unwrap()
    );
    let r = gw.http().get(&url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let h = r.headers().clone();
    assert_eq!(h["content-type"], "application/octet-stream");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(
        h["content-disposition"],
        "attachment; filename=\"cat.jpg\"; filename*=UTF-8''cat.jpg"
    );
    assert!(r.bytes().await.unwrap().to_vec() == photo, "the same bytes");
    // Without the token, and with a path for an id: refused.
    let bare = reqwest::Client::new().get(&url).send().await.unwrap();
    assert_eq!(bare.status().as_u16(), 401);
    let r = gw
        .http()
        .get(format!(
            "{}/api/webchat/files/..%2F..%2Fgateway.token",
            gw.base_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    fake.assert_no_violations();
}

/// Catches: an upload taken without the token, a body over `media.maxBytes` stored (with
/// or without a `Content-Length` to refuse it by) or refused without saying why, an
/// empty upload, and a frame naming an id that was never uploaded reaching the agent.
#[tokio::test]
async fn uploads_need_the_token_and_stay_within_the_limit() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"media": {"maxBytes": 65536}})).await;
    let bare = reqwest::Client::new()
        .post(format!("{}/api/webchat/uploads", gw.base_url()))
        .body(vec![1u8; 10])
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status().as_u16(), 401);

    let (status, body) = upload(&gw, vec![1u8; 100 * 1024].into()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (
            413,
            Some("the file is larger than the 64 KB limit (media.maxBytes)")
        )
    );
    // Streamed (chunked, no length): refused at the chunk past the limit, nothing kept.
    let chunks =
        futures::stream::iter((0..10).map(|_| Ok::<_, std::io::Error>(vec![2u8; 16 * 1024])));
    let (status, body) = upload(&gw, reqwest::Body::wrap_stream(chunks)).await;
    assert_eq!(status, 413, "{body}");
    let staged: Vec<_> = std::fs::read_dir(gw.state_dir().join("media/webchat"))
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(
        staged.is_empty(),
        "nothing kept of a refused upload: {staged:?}"
    );
    let (status, body) = upload(&gw, Vec::<u8>::new().into()).await;
    assert_eq!(status, 400, "{body}");

    // A frame naming an id never uploaded: the sender is told, the agent gets the note.
    let mut ws = chat(&gw, "main").await;
    ws.send_raw(
        &json!({"type": "message", "text": "see", "files": [{"id": "0123456789abcdef0123456789abcdef", "name": "x.txt"}]})
            .to_string(),
    )
    .await
    .unwrap();
    let mut texts = vec![ws.next_message(WAIT).await.unwrap()];
    texts.push(ws.next_message(WAIT).await.unwrap());
    texts.sort();
    assert!(
        texts[0].starts_with("echo: see\n[file refused: x.txt"),
        "{texts:?}"
    );
    assert!(
        texts[1].starts_with("⚠️ x.txt was not received"),
        "{texts:?}"
    );
    // A path for an id is refused at the frame.
    ws.send_raw(
        &json!({"type": "message", "text": "", "files": [{"id": "../gateway.token", "name": "t"}]})
            .to_string(),
    )
    .await
    .unwrap();
    let e = ws.next_of_type("error", WAIT).await.unwrap();
    assert_eq!(e["error"], "unknown upload id");
}

/// In headless Chromium: a file pasted into the box is uploaded and shown waiting, sent
/// with the message (the model gets it as an image part with the note), and the file the
/// agent sends back shows as a download button, again after a reload (from the history).
/// Catches: the page not uploading a pasted file, not naming it in the frame, not showing
/// a `file` frame, or a history entry's file shown without its button.
#[tokio::test]
async fn the_page_uploads_a_pasted_file_and_shows_the_agents_file() {
    use switchboard_testkit::browser::Browser;
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    fake.push_for(
        "what is it",
        Step::tool_call("message", r#"{"path": "inbox/dot.png"}"#),
    );
    fake.push_for("what is it", Step::text("done"));
    let browser = Browser::launch().await.unwrap();
    browser.goto(&gw.page_url("/")).await.unwrap();
    browser
        .wait_for_text("#status", "connected", WAIT)
        .await
        .unwrap();
    browser
        .execute(
            r#"const png = new Uint8Array([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4]);
               const dt = new DataTransfer();
               dt.items.add(new File([png], "dot.png", {type: "image/png"}));
               document.getElementById("input").dispatchEvent(
                 new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
               return true;"#,
            vec![],
        )
        .await
        .unwrap();
    browser
        .wait_for_text("#attachments .attachment", "dot.png", WAIT)
        .await
        .unwrap();
    browser
        .find("#input")
        .await
        .unwrap()
        .send_keys("what is it")
        .await
        .unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    browser
        .wait_for_text(
            ".msg.assistant.file button.download",
            "dot.png (12 bytes)",
            WAIT,
        )
        .await
        .unwrap();
    let first = &fake.requests()[0].body;
    assert_eq!(images_of(first), vec![("image/png".to_string(), 12)]);
    // Reloaded, the page shows the file again from the history, with its button.
    browser.goto(&gw.page_url("/")).await.unwrap();
    browser
        .wait_for_text(
            ".msg.assistant.file.history button.download",
            "dot.png (12 bytes)",
            WAIT,
        )
        .await
        .unwrap();
    browser.quit().await.unwrap();
    fake.assert_no_violations();
}

/// Set the modification time of `path` (a file or a folder) `secs` into the past.
fn age(path: &std::path::Path, secs: u64) {
    let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    std::fs::File::open(path)
        .and_then(|f| f.set_modified(t))
        .unwrap();
}

/// Catches: a web chat download removed once delivered (or kept past `media.keepDays`),
/// a reconnect's history without the sent file's download, a copy no outbox row names (a crash between copy and queue) or a stale upload kept
/// for ever, the sweep not running at start, or an expired link answering a bare 404.
#[tokio::test]
async fn web_chat_copies_stay_for_keep_days_and_a_restart_sweeps_the_rest() {
    let fake = FakeModel::start().await.unwrap();
    let mut gw = start(&fake, json!({})).await;
    std::fs::create_dir_all(gw.state_dir().join("workspace")).unwrap();
    std::fs::write(gw.state_dir().join("workspace/notes.txt"), b"my notes").unwrap();
    fake.push_for(
        "send the notes",
        Step::tool_call("message", r#"{"path": "notes.txt"}"#),
    );
    fake.push_for("send the notes", Step::text("sent"));
    let mut ws = chat(&gw, "main").await;
    ws.send_text("send the notes").await.unwrap();
    let file = ws.next_of_type("file", WAIT).await.unwrap();
    let id = file["file"]["id"].as_str().unwrap().to_string();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "sent");
    crate::common::wait_outbox_sent(&gw, 2).await;
    let url = |gw: &switchboard_testkit::harness::Gateway| {
        format!("{}/api/webchat/files/{id}", gw.base_url())
    };
    drop(ws);

    // What a crash leaves: a copy no row names and an upload no message took, both old.
    let out = gw.state_dir().join("media/out");
    let orphan = out.join("fedcba9876543210fedcba9876543210");
    std::fs::create_dir_all(&orphan).unwrap();
    std::fs::write(orphan.join("lost.bin"), b"lost").unwrap();
    let staged = gw.state_dir().join("media/webchat");
    std::fs::create_dir_all(&staged).unwrap();
    let upload = staged.join("0123456789abcdef0123456789abcdef");
    std::fs::write(&upload, b"never sent").unwrap();
    age(&orphan, 7200);
    age(&upload, 48 * 3600);
    // The delivered copy too: past the orphan grace, still within media.keepDays.
    age(&out.join(&id), 7200);

    gw.terminate().await.unwrap();
    let mark = gw.log_mark();
    gw.restart().await.unwrap();
    gw.wait_for_log_since(mark, "removed files no longer needed", WAIT)
        .await
        .unwrap();
    assert!(!orphan.exists() && !upload.exists());
    let r = gw.http().get(url(&gw)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.bytes().await.unwrap().as_ref(), b"my notes");
    // A reconnect's history shows the sent file with its download, under its live key.
    let mut ws = switchboard_testkit::harness::WsClient::connect(&gw.ws_url("main"))
        .await
        .unwrap();
    let history = ws.next_of_type("history", WAIT).await.unwrap();
    let entries: Vec<&Value> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m["file"].is_null())
        .collect();
    assert_eq!(entries.len(), 1, "{history}");
    assert_eq!(
        (
            entries[0]["role"].as_str(),
            entries[0]["file"]["id"].as_str(),
            entries[0]["file"]["name"].as_str(),
            entries[0]["file"]["size"].as_u64(),
            entries[0]["key"]
                .as_str()
                .is_some_and(|k| k.starts_with("message:")),
        ),
        (
            Some("assistant"),
            Some(id.as_str()),
            Some("notes.txt"),
            Some(8),
            true
        )
    );
    drop(ws);

    // media.keepDays 0: the next sweep (at start) removes the download; its link says why.
    let cfg = std::fs::read_to_string(gw.config_path()).unwrap();
    let mut cfg: Value = serde_json::from_str(&cfg).unwrap();
    crate::common::merge(&mut cfg, &json!({"media": {"keepDays": 0}}));
    gw.write_config(&cfg.to_string()).await.unwrap();
    gw.terminate().await.unwrap();
    let mark = gw.log_mark();
    gw.restart().await.unwrap();
    gw.wait_for_log_since(mark, "removed files no longer needed", WAIT)
        .await
        .unwrap();
    assert_eq!(
        crate::media_telegram::copies_left(gw.state_dir()),
        Vec::<String>::new()
    );
    let r = gw.http().get(url(&gw)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 410);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["error"],
        "this file is no longer available: files sent in the web chat can be downloaded for 0 days after they are sent (media.keepDays)"
    );
    fake.assert_no_violations();
}
