//! Tests of the WebDriver client against tiny local pages, and of the web chat page itself.
#![allow(clippy::unwrap_used)] // tests fail loudly by design

use super::*;
use axum::response::Html;
use axum::routing::get;
use std::sync::{Arc, Mutex};

const ECHO_PAGE: &str = r#"<!doctype html><html><body>
    <input id="in"><button id="go">go</button><div id="out"></div>
    <script>
      document.getElementById('go').addEventListener('click', () => {
        const out = document.getElementById('out');
        out.textContent = 'echo: ' + document.getElementById('in').value;
      });
    </script></body></html>"#;

async fn serve(page: &'static str) -> anyhow::Result<(String, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = axum::Router::new().route("/", get(move || async move { Html(page) }));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((format!("http://{addr}/"), server))
}

/// Needs chromium and chromedriver: `tests/setup.sh` installs them (and `launch` says so
/// when they are missing).
#[tokio::test]
async fn browser_types_clicks_and_reads_back() {
    let (url, server) = serve(ECHO_PAGE).await.unwrap();
    let browser = Browser::launch().await.unwrap();
    browser.goto(&url).await.unwrap();
    assert_eq!(browser.current_url().await.unwrap(), url);

    let input = browser.find("#in").await.unwrap();
    input.send_keys("hello browser").await.unwrap();
    assert_eq!(
        input.property("value").await.unwrap(),
        json!("hello browser")
    );
    browser.find("#go").await.unwrap().click().await.unwrap();

    let text = browser
        .wait_for_text("#out", "hello", Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(text, "echo: hello browser");
    assert_eq!(
        browser.find("#out").await.unwrap().text().await.unwrap(),
        "echo: hello browser"
    );
    assert_eq!(browser.find_all("input, button").await.unwrap().len(), 2);
    assert!(browser.find("#missing").await.is_err());

    let err = browser
        .wait_for_text("#out", "never there", Duration::from_millis(300))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("echo: hello browser"), "{err}");
    assert!(err.contains("no #messages element"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shots/echo.png");
    browser.screenshot(&shot).await.unwrap();
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    browser.quit().await.unwrap();
    server.abort();
}

/// Dropping a `Browser` without `quit` (a failed test) kills chromium and removes its
/// profile; chromium would otherwise outlive chromedriver.
#[tokio::test]
async fn dropping_a_browser_leaves_no_chromium_behind() {
    let browser = Browser::launch().await.unwrap();
    let profile = browser.profile.path().to_owned();
    assert!(
        !pids_using_profile(&profile).is_empty(),
        "chromium should be running"
    );
    drop(browser);
    assert_eq!(pids_using_profile(&profile), Vec::<u32>::new());
    assert!(!profile.exists(), "the profile dir should be gone");
}

/// `quit` ends chromium as well.
#[tokio::test]
async fn quit_leaves_no_chromium_behind() {
    let browser = Browser::launch().await.unwrap();
    let profile = browser.profile.path().to_owned();
    browser.quit().await.unwrap();
    assert_eq!(pids_using_profile(&profile), Vec::<u32>::new());
    assert!(!profile.exists(), "the profile dir should be gone");
}

/// Where screenshots go: `$SWITCHBOARD_SCREENSHOT_DIR` when set (to look at them), else a
/// temporary dir removed at the end of the test.
struct ScreenshotDir {
    keep: Option<std::path::PathBuf>,
    temp: tempfile::TempDir,
}

impl ScreenshotDir {
    fn new() -> Self {
        ScreenshotDir {
            keep: std::env::var_os("SWITCHBOARD_SCREENSHOT_DIR").map(Into::into),
            temp: tempfile::tempdir().unwrap(),
        }
    }

    fn join(&self, name: &str) -> std::path::PathBuf {
        self.keep.as_deref().unwrap_or(self.temp.path()).join(name)
    }
}

/// The built-in web chat page opened as a file: the DOM contract the e2e tests rely on holds
/// even without a gateway (a typed message shows up at once as `div.msg.user`).
/// Set `SWITCHBOARD_SCREENSHOT_DIR` to keep the screenshots (see [`ScreenshotDir`]).
#[tokio::test]
async fn webchat_page_works_offline() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gateway/src/server/webchat.html");
    let page = page.canonicalize().unwrap();
    let browser = Browser::launch().await.unwrap();
    browser
        .goto(&format!("file://{}", page.display()))
        .await
        .unwrap();

    let status = browser.find("#status").await.unwrap().text().await.unwrap();
    assert_eq!(status, "offline (no gateway)");
    let shots = ScreenshotDir::new();
    browser
        .screenshot(shots.join("webchat-file.png"))
        .await
        .unwrap();
    assert_eq!(
        browser.find("#typing").await.unwrap().text().await.unwrap(),
        ""
    );

    let input = browser.find("#input").await.unwrap();
    input.send_keys("first line").await.unwrap();
    input
        .send_keys(&format!("{}{}", keys::SHIFT, keys::ENTER))
        .await
        .unwrap();
    input
        .send_keys(&format!("second line{}", keys::ENTER))
        .await
        .unwrap();
    let text = browser
        .wait_for_text(
            "#messages div.msg.user",
            "second line",
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(text, "first line\nsecond line");
    assert_eq!(input.property("value").await.unwrap(), json!(""));

    input.send_keys("via the button").await.unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    browser
        .wait_for_text(
            "#messages div.msg.user",
            "via the button",
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    assert_eq!(
        browser.find_all("#messages div.msg").await.unwrap().len(),
        2
    );

    browser.set_window_size(390, 844).await.unwrap();
    browser
        .screenshot(shots.join("webchat-file-mobile.png"))
        .await
        .unwrap();
    browser.quit().await.unwrap();
}

/// The web chat page as the gateway serves it, with its static files.
const WEBCHAT: &str = include_str!("../../../gateway/src/server/webchat.html");
const WEBCHAT_JS: &str = include_str!("../../../gateway/src/server/static/webchat.js");
const WEBCHAT_CSS: &str = include_str!("../../../gateway/src/server/static/webchat.css");
const MARKDOWN_JS: &str = include_str!("../../../gateway/src/server/static/markdown.js");

/// `/static/{file}` of the web chat page.
async fn static_file(
    axum::extract::Path(file): axum::extract::Path<String>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (body, ty) = match file.as_str() {
        "webchat.js" => (WEBCHAT_JS, "text/javascript"),
        "markdown.js" => (MARKDOWN_JS, "text/javascript"),
        "webchat.css" => (WEBCHAT_CSS, "text/css"),
        _ => return axum::http::StatusCode::NOT_FOUND.into_response(),
    };
    ([(axum::http::header::CONTENT_TYPE, ty)], body).into_response()
}

/// What the fake `/ws` endpoint saw: the query string of each connection and every frame.
#[derive(Default)]
struct Seen {
    queries: Vec<String>,
    frames: Vec<Value>,
}

/// Serves the web chat page at `/` and a scripted `/ws` endpoint: "hi" gets typing on, two
/// assistant messages (one with markup and a newline, one sub-agent announce) and an error;
/// "bye" makes the server drop the connection.
async fn serve_webchat() -> (String, Arc<Mutex<Seen>>) {
    use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
    use axum::extract::RawQuery;

    async fn chat(mut socket: WebSocket, seen: Arc<Mutex<Seen>>) {
        let frame = |v: Value| Message::Text(v.to_string().into());
        let hello = json!({ "type": "hello", "chatId": "test-chat" });
        if socket.send(frame(hello)).await.is_err() {
            return;
        }
        while let Some(Ok(Message::Text(raw))) = socket.recv().await {
            let got: Value = serde_json::from_str(raw.as_str()).unwrap_or(Value::Null);
            lock(&seen).frames.push(got.clone());
            let replies = match (got["type"].as_str(), got["text"].as_str()) {
                (Some("message"), Some("hi")) => vec![
                    json!({ "type": "typing", "active": true }),
                    json!({ "type": "event", "event": { "kind": "run_started" } }),
                    json!({ "type": "message", "text": "hello <b>world</b>\nsecond line", "key": "k" }),
                    json!({ "type": "message", "text": "Status: sub-agent explore finished", "key": "k" }),
                    json!({ "type": "error", "error": "model unavailable" }),
                ],
                (Some("message"), Some("bye")) => return,
                (Some("ping"), _) => vec![json!({ "type": "pong" })],
                _ => vec![],
            };
            for reply in replies {
                if socket.send(frame(reply)).await.is_err() {
                    return;
                }
            }
        }
    }

    let seen = Arc::new(Mutex::new(Seen::default()));
    let ws_seen = seen.clone();
    let app = axum::Router::new()
        .route("/", get(|| async { Html(WEBCHAT) }))
        .route("/static/{file}", get(static_file))
        .route(
            "/ws",
            get(move |ws: WebSocketUpgrade, RawQuery(query): RawQuery| {
                let seen = ws_seen.clone();
                async move {
                    lock(&seen).queries.push(query.unwrap_or_default());
                    ws.on_upgrade(move |socket| chat(socket, seen))
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}"), seen)
}

/// Every `#messages .msg` as (className, rendered text).
async fn rendered_messages(browser: &Browser) -> Vec<(String, String)> {
    let v = browser
        .execute(
            "return Array.from(document.querySelectorAll('#messages .msg'))\
             .map(e => [e.className, e.innerText]);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

/// The page against a scripted `/ws`: URL parameters, rendering of every frame type, the
/// typing indicator, and reconnecting after the server drops the connection.
/// Set `SWITCHBOARD_SCREENSHOT_DIR` to keep the screenshot (see [`ScreenshotDir`]).
#[tokio::test]
async fn webchat_page_speaks_the_protocol_and_reconnects() {
    const WAIT: Duration = Duration::from_secs(10);
    let (base, seen) = serve_webchat().await;
    let browser = Browser::launch().await.unwrap();
    browser
        .goto(&format!("{base}/?chat=test-chat&token=tok%201"))
        .await
        .unwrap();

    let status = browser.wait_for("#status.connected", WAIT).await.unwrap();
    assert_eq!(status.text().await.unwrap(), "connected");
    assert_eq!(lock(&seen).queries, ["chat=test-chat&token=tok%201"]);
    let stored = browser
        .execute("return localStorage.getItem('switchboard.token');", vec![])
        .await
        .unwrap();
    assert_eq!(stored, json!("tok 1"));

    let input = browser.find("#input").await.unwrap();
    input
        .send_keys(&format!("hi{}", keys::ENTER))
        .await
        .unwrap();
    browser
        .wait_for_text("#messages .msg.error", "model unavailable", WAIT)
        .await
        .unwrap();
    let expected = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(c, t)| ((*c).to_owned(), (*t).to_owned()))
            .collect()
    };
    assert_eq!(
        rendered_messages(&browser).await,
        expected(&[
            ("msg user", "hi"),
            ("msg assistant md", "hello <b>world</b>\nsecond line"),
            (
                "msg assistant announce md",
                "Status: sub-agent explore finished"
            ),
            ("msg error", "model unavailable"),
        ])
    );
    assert_eq!(
        browser.find("#typing").await.unwrap().text().await.unwrap(),
        "assistant is typing…"
    );
    assert_eq!(
        lock(&seen).frames,
        [json!({ "type": "message", "text": "hi" })]
    );

    let shots = ScreenshotDir::new();
    browser
        .screenshot(shots.join("webchat-live.png"))
        .await
        .unwrap();

    // The server drops the connection: the page says so, hides the typing indicator and
    // reconnects on its own after the first backoff step (1 s).
    browser
        .find("#input")
        .await
        .unwrap()
        .send_keys("bye")
        .await
        .unwrap();
    browser.find("#send").await.unwrap().click().await.unwrap();
    browser
        .wait_for_text("#status", "disconnected — reconnecting…", WAIT)
        .await
        .unwrap();
    assert_eq!(
        browser.find("#typing").await.unwrap().text().await.unwrap(),
        ""
    );
    browser.wait_for("#status.connected", WAIT).await.unwrap();
    assert_eq!(lock(&seen).queries.len(), 2);
    browser.quit().await.unwrap();
}
