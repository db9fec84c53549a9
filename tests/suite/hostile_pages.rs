//! Hostile web pages through the real daemon: 100,000-deep nestings of every kind, a tag
//! soup, a gzip bomb and an endless body. Each fetch gets an answer and the daemon answers
//! the next message. (Catches: the HTML→Markdown walk overflowing a runtime worker's stack,
//! which aborted the whole process on 55 KB of nested `<div>`s.)

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_web::{FakeWeb, DEEPEST, KINDS};

use crate::common::{chat, start};
use crate::tools_support::{call, json as parse};

fn fetch(url: &str) -> String {
    json!({"url": url, "maxChars": 60000}).to_string()
}

#[tokio::test]
async fn no_page_ends_the_daemon() {
    let fake = FakeModel::start().await.unwrap();
    let web = FakeWeb::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"tools": {"web": {"fetch": {"allowHosts": ["127.0.0.1"]}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    for kind in KINDS {
        let url = web.url(&format!("/deep/{kind}"));
        let r = parse(
            &call(
                &fake,
                &mut ws,
                &format!("deep {kind}"),
                "web_fetch",
                &fetch(&url),
            )
            .await,
        );
        assert_eq!(r["status"], 200, "{kind}: {r}");
        let text = r["text"].as_str().unwrap();
        // The soup's text lies past the 2 MB the fetch reads; every other page's is kept.
        if *kind != "soup" {
            assert!(
                text.contains(DEEPEST),
                "{kind}: …{}",
                &text[text.len().saturating_sub(300)..]
            );
        }
    }
    // Compressed bytes are never inflated (no Accept-Encoding is sent): the 30 MB of zeros
    // stay a bounded body of noise.
    let r = parse(
        &call(
            &fake,
            &mut ws,
            "bomb",
            "web_fetch",
            &fetch(&web.url("/gzip-bomb")),
        )
        .await,
    );
    assert_eq!(r["status"], 200, "{r}");
    assert!(r["text"].as_str().unwrap().len() <= 4 * 60000, "{r}");
    // A body that never ends is read up to 2 MB.
    let r = parse(
        &call(
            &fake,
            &mut ws,
            "endless",
            "web_fetch",
            &fetch(&web.url("/endless")),
        )
        .await,
    );
    assert_eq!(r["truncated"], true, "{r}");
    assert!(
        r["note"].as_str().unwrap().contains("body cut at 2 MB"),
        "{r}"
    );

    // Still the same process, still answering.
    ws.send_text("still there?").await.unwrap();
    assert_eq!(
        ws.next_message(crate::common::WAIT).await.unwrap(),
        "echo: still there?"
    );
    fake.assert_no_violations();
}
