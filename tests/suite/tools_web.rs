//! `web_fetch` end to end against a local site: a page turned into Markdown (its host
//! allowed), and the SSRF guard refusing loopback by address, by a name resolving to it,
//! and through a redirect — before any request reaches the target.

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_web::FakeWeb;

use crate::common::{chat, start};
use crate::tools_support::{call, json as parse};

fn fetch(url: &str) -> String {
    json!({"url": url}).to_string()
}

/// An allowed host's page comes back as Markdown; text is returned as is; a binary body
/// is refused; a big body is read up to 2 MB; five redirects are followed and a sixth is
/// refused. Catches: HTML passed raw, unbounded bodies, or a redirect loop followed.
#[tokio::test]
async fn an_allowed_page_comes_back_as_markdown() {
    let fake = FakeModel::start().await.unwrap();
    let web = FakeWeb::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"tools": {"web": {"fetch": {"allowHosts": ["127.0.0.1"]}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    let r = parse(&call(&fake, &mut ws, "f1", "web_fetch", &fetch(&web.url("/page"))).await);
    assert_eq!(r["status"], 200);
    let text = r["text"].as_str().unwrap();
    assert!(
        text.contains("# Fake page")
            && text.contains("**bold**")
            && text.contains("[link](https://example.com/)"),
        "{text}"
    );
    assert!(!text.contains("<p>") && !text.contains("var x"), "{text}");
    let r = parse(&call(&fake, &mut ws, "f2", "web_fetch", &fetch(&web.url("/text"))).await);
    assert_eq!(r["text"], "plain text body");
    let r = call(
        &fake,
        &mut ws,
        "f3",
        "web_fetch",
        &fetch(&web.url("/binary")),
    )
    .await;
    assert!(r.starts_with("error: ") && r.contains("is not text"), "{r}");
    let r = parse(
        &call(
            &fake,
            &mut ws,
            "f4",
            "web_fetch",
            &json!({"url": web.url("/big"), "maxChars": 1000}).to_string(),
        )
        .await,
    );
    assert_eq!(
        (r["truncated"].as_bool(), r["text"].as_str().map(str::len)),
        (Some(true), Some(1000))
    );
    // The 3 MB body was read up to 2 MB only.
    assert_eq!(
        r["note"], "cut to 1000 characters (of 2097152, body cut at 2 MB)",
        "{r}"
    );
    // Five redirects are followed, a sixth is not.
    let chain = |hops: usize| (0..hops).fold(web.url("/text"), |to, _| web.redirect_to(&to));
    let r = parse(&call(&fake, &mut ws, "f6", "web_fetch", &fetch(&chain(5))).await);
    assert_eq!(r["text"], "plain text body", "{r}");
    let r = call(&fake, &mut ws, "f7", "web_fetch", &fetch(&chain(6))).await;
    assert!(r.contains("more than 5 redirects"), "{r}");
    let r = call(
        &fake,
        &mut ws,
        "f5",
        "web_fetch",
        &fetch("file:///etc/passwd"),
    )
    .await;
    assert!(r.contains("only http and https"), "{r}");
    fake.assert_no_violations();
}

/// Without `allowHosts`: 127.0.0.1, `localhost` (a name resolving to it) and a redirect
/// from an allowed host to 127.0.0.1 are all refused, and the internal page never sees a
/// request. Catches: a guard that checks only the first URL, or only literal addresses.
#[tokio::test]
async fn internal_addresses_are_refused_at_every_hop() {
    let fake = FakeModel::start().await.unwrap();
    let web = FakeWeb::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"tools": {"web": {"fetch": {"allowHosts": ["localhost"]}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "g1",
        "web_fetch",
        &fetch(&web.url("/secret")),
    )
    .await;
    assert!(
        r.starts_with("error: refused: 127.0.0.1 is a loopback address"),
        "{r}"
    );
    let hop = web.localhost_url(&format!("/redirect?to={}", web.url("/secret")));
    let r = call(&fake, &mut ws, "g2", "web_fetch", &fetch(&hop)).await;
    assert!(
        r.starts_with("error: refused: 127.0.0.1 is a loopback address"),
        "{r}"
    );
    assert_eq!(
        web.hits("/redirect"),
        1,
        "the allowed first hop was fetched"
    );
    for (trigger, url) in [
        ("g3", "http://[::ffff:127.0.0.1]:9/"),
        ("g4", "http://169.254.169.254/latest/meta-data/"),
        ("g5", "http://10.0.0.1/"),
    ] {
        let r = call(&fake, &mut ws, trigger, "web_fetch", &fetch(url)).await;
        assert!(r.starts_with("error: refused: "), "{url}: {r}");
    }
    assert_eq!(web.hits("/secret"), 0);

    // The same site by the name `localhost`, with no allowHosts: refused after resolving.
    let gw2 = start(&fake, json!({})).await;
    let mut ws2 = chat(&gw2, "main").await;
    let r = call(
        &fake,
        &mut ws2,
        "g6",
        "web_fetch",
        &fetch(&web.localhost_url("/secret")),
    )
    .await;
    assert!(
        r.starts_with("error: refused: localhost resolves to ") && r.contains("loopback"),
        "{r}"
    );
    assert_eq!(web.hits("/secret"), 0);
    drop(gw);
}
