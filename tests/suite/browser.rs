//! The web chat page in a real headless Chromium: type a message, see the reply.

use serde_json::json;
use switchboard_testkit::browser::Browser;
use switchboard_testkit::fake_model::FakeModel;

use crate::common::{start, WAIT};

#[tokio::test]
async fn the_page_sends_and_shows_the_reply() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let browser = Browser::launch().await.unwrap();
    browser.goto(&format!("{}/", gw.base_url())).await.unwrap();
    browser
        .wait_for_text("#status", "connected", WAIT)
        .await
        .unwrap();
    let input = browser.find("#input").await.unwrap();
    input.send_keys("hi from the browser").await.unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    browser
        .wait_for_text(".msg.user", "hi from the browser", WAIT)
        .await
        .unwrap();
    browser
        .wait_for_text(".msg.assistant", "echo: hi from the browser", WAIT)
        .await
        .unwrap();
    browser.quit().await.unwrap();
}
