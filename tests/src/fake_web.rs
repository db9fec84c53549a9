//! A small web site on 127.0.0.1 for `web_fetch` tests: an HTML page, a redirect to any
//! URL, a binary file and a big text, with a count of the requests each path received
//! (to prove a refused fetch never reached it); and hostile pages (`fake_web_hostile`):
//! 100,000-deep nestings, a tag soup, a gzip bomb and an endless body.
//!
//! ```ignore
//! let web = FakeWeb::start().await?;
//! let page = web.url("/page");           // http://127.0.0.1:PORT/page
//! let hop = web.redirect_to("http://127.0.0.1:1/secret");
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Query, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::fake_support::{bind, ServerTask};

#[path = "fake_web_hostile.rs"]
mod hostile;
pub use hostile::{gzip_zeros, DEEPEST, DEPTH, KINDS};

/// The HTML of `/page`.
pub const PAGE: &str = "<html><head><title>T</title><script>var x = 1;</script></head><body>\
<h1>Fake page</h1><p>Some <b>bold</b> words and a <a href=\"https://example.com/\">link</a>.</p>\
<ul><li>one</li><li>two</li></ul></body></html>";

#[derive(Default)]
struct Hits(Mutex<HashMap<String, usize>>);

/// Handle to the running site; it stops when dropped.
pub struct FakeWeb {
    addr: SocketAddr,
    hits: Arc<Hits>,
    _server: ServerTask,
}

impl FakeWeb {
    pub async fn start() -> anyhow::Result<FakeWeb> {
        let (listener, addr) = bind("fake web").await?;
        let hits = Arc::new(Hits::default());
        let app = Router::new()
            .route(
                "/page",
                get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }),
            )
            .route(
                "/text",
                get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "plain text body") }),
            )
            .route("/secret", get(|| async { "internal secret" }))
            .route(
                "/binary",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "application/octet-stream")],
                        vec![0u8, 1, 2, 3, 255],
                    )
                }),
            )
            .route(
                "/big",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "text/plain")],
                        "x".repeat(3 * 1024 * 1024),
                    )
                }),
            )
            .route("/redirect", get(redirect))
            .route("/deep/{kind}", get(hostile::deep))
            .route("/gzip-bomb", get(hostile::gzip_bomb))
            .route("/endless", get(hostile::endless))
            .fallback(|| async { StatusCode::NOT_FOUND })
            .layer(axum::middleware::from_fn_with_state(hits.clone(), count))
            .with_state(hits.clone());
        let cancel = CancellationToken::new();
        let server = ServerTask::spawn("fake web", cancel, |stop| {
            axum::serve(listener, app).with_graceful_shutdown(stop)
        });
        Ok(FakeWeb {
            addr,
            hits,
            _server: server,
        })
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The same URL written with the host name `localhost`.
    pub fn localhost_url(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.addr.port())
    }

    /// A URL of this site that redirects (302) to `target`.
    pub fn redirect_to(&self, target: &str) -> String {
        let mut url = reqwest::Url::parse(&self.url("/redirect"))
            .unwrap_or_else(|_| unreachable!("a valid base URL"));
        url.query_pairs_mut().append_pair("to", target);
        url.to_string()
    }

    /// Requests `path` received so far.
    pub fn hits(&self, path: &str) -> usize {
        self.hits
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

async fn redirect(Query(q): Query<HashMap<String, String>>) -> Response {
    match q.get("to") {
        Some(to) => (StatusCode::FOUND, [(header::LOCATION, to.clone())]).into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

async fn count(
    State(hits): State<Arc<Hits>>,
    uri: Uri,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    *hits
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(uri.path().to_string())
        .or_default() += 1;
    next.run(req).await
}
