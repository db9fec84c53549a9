//! Exec approvals through the web chat's buttons: in headless Chromium the request shows
//! its buttons, a click approves, the command runs and the request turns into its outcome;
//! over the socket, a press from another chat changes nothing.

use serde_json::{json, Value};
use switchboard_testkit::browser::Browser;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::WsClient;

use crate::common::{chat, start, WAIT};
use crate::tools_support::{script, workspace};

fn allowlist() -> Value {
    json!({"tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}}})
}

/// The next `message` frame that carries buttons.
async fn request_frame(ws: &mut WsClient) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let f = ws.next_frame(left).await.unwrap();
        if f["type"] == "message" && f["actions"].is_array() {
            return f;
        }
    }
}

/// The page renders the request's buttons; clicking "Allow once" runs the command, the
/// request shows its outcome with no buttons left, and the tool call shows as a collapsed
/// line. Catches: buttons not rendered, a click that sends nothing, the request left
/// clickable, tool calls invisible in the page.
#[tokio::test]
async fn a_click_on_the_page_approves() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    script(
        &fake,
        "wc1",
        "exec",
        &json!({"command": "touch clicked.txt"}).to_string(),
    );
    let browser = Browser::launch().await.unwrap();
    browser.goto(&gw.page_url("/")).await.unwrap();
    browser
        .wait_for_text("#status", "connected", WAIT)
        .await
        .unwrap();
    browser
        .find("#input")
        .await
        .unwrap()
        .send_keys("wc1")
        .await
        .unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    let allow = browser
        .wait_for("button.action[data-action$=':allow-once']", WAIT)
        .await
        .unwrap();
    assert_eq!(
        browser
            .find_all(".msg.assistant button.action")
            .await
            .unwrap()
            .len(),
        3
    );
    assert!(!workspace(&gw).join("clicked.txt").exists());
    allow.click().await.unwrap();
    browser
        .wait_for_text(".msg.assistant.settled", "✅ allowed once", WAIT)
        .await
        .unwrap();
    browser
        .wait_for_text(".msg.assistant", "done wc1", WAIT)
        .await
        .unwrap();
    assert!(workspace(&gw).join("clicked.txt").exists());
    // The tool call shows as one collapsed line (issue point 10).
    browser
        .wait_for_text("details.msg.tool:not([open]) summary", "🔧 exec · ok", WAIT)
        .await
        .unwrap();
    assert!(
        browser.find_all("button.action").await.unwrap().is_empty(),
        "no buttons left"
    );
    browser.quit().await.unwrap();
    fake.assert_no_violations();
}

/// A press sent from another chat's socket is answered "no pending approval" and changes
/// nothing; the owning chat's press settles it and every socket of that chat sees the
/// message updated. Catches: any chat approving through a crafted press frame.
#[tokio::test]
async fn a_press_from_another_chat_changes_nothing() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    script(
        &fake,
        "wc2",
        "exec",
        &json!({"command": "touch other.txt"}).to_string(),
    );
    let mut ws = chat(&gw, "main").await;
    let mut intruder = chat(&gw, "intruder").await;
    ws.send_text("wc2").await.unwrap();
    let req = request_frame(&mut ws).await;
    let key = req["key"].as_str().unwrap().to_string();
    let allow = req["actions"][0]["id"].as_str().unwrap().to_string();
    assert!(allow.ends_with(":allow-once"), "{req}");
    let id = allow.split(':').nth(1).unwrap().to_string();

    let press = json!({"type": "press", "action": allow, "key": key}).to_string();
    intruder.send_raw(&press).await.unwrap();
    let notice = intruder.next_of_type("notice", WAIT).await.unwrap();
    assert_eq!(
        notice["text"],
        format!("No pending approval {id} in this chat."),
        "{notice}"
    );
    assert!(!workspace(&gw).join("other.txt").exists());

    ws.send_raw(&press).await.unwrap();
    // The notice (to the presser), the update (to the chat's sockets) and the run's answer
    // come in no fixed order.
    let (mut update, mut notice, mut done) = (None, None, false);
    let deadline = tokio::time::Instant::now() + WAIT;
    while update.is_none() || notice.is_none() || !done {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let f = ws.next_frame(left).await.unwrap();
        match f["type"].as_str() {
            Some("update") => update = Some(f),
            Some("notice") => notice = Some(f),
            Some("message") if f["text"] == "done wc2" => done = true,
            _ => {}
        }
    }
    let (update, notice) = (update.unwrap(), notice.unwrap());
    assert_eq!(update["key"], key.as_str());
    assert!(
        update["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("🔐 Approval [{id}]: ✅ allowed once")),
        "{update}"
    );
    assert_eq!(
        notice["text"],
        format!("✅ Approved {id} once: the command runs now.")
    );
    assert!(workspace(&gw).join("other.txt").exists());
    fake.assert_no_violations();
}
