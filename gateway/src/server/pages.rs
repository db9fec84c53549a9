//! The browser pages — the web chat at `/`, the control page at `/control` — and their
//! scripts and styles under `/static/`, all embedded in the binary (`include_str!`): the
//! pages work offline and load nothing from another site. The Content-Security-Policy
//! allows scripts, styles and connections from the daemon itself only, so even text that
//! slipped into the DOM as markup could not run a script.

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

const WEBCHAT_PAGE: &str = include_str!("webchat.html");
const CONTROL_PAGE: &str = include_str!("control.html");

/// One embedded file under `/static/`.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: &[Asset] = &[
    asset("webchat.js", JS, include_str!("static/webchat.js")),
    asset("webchat.css", CSS, include_str!("static/webchat.css")),
    asset("markdown.js", JS, include_str!("static/markdown.js")),
    asset(
        "webchat_files.js",
        JS,
        include_str!("static/webchat_files.js"),
    ),
    asset("control.js", JS, include_str!("static/control.js")),
    asset("control.css", CSS, include_str!("static/control.css")),
];

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

const fn asset(name: &'static str, content_type: &'static str, body: &'static str) -> Asset {
    Asset {
        name,
        content_type,
        body,
    }
}

/// Scripts, styles and sockets from the daemon itself only; no plugins, no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub async fn webchat() -> Response {
    page(WEBCHAT_PAGE)
}

pub async fn control() -> Response {
    page(CONTROL_PAGE)
}

/// A page. It must not be framed by another site (it may hold a token), and its URL
/// (which may carry `?token=`) is not sent on as a referrer.
fn page(html: &'static str) -> Response {
    (
        [
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        axum::response::Html(html),
    )
        .into_response()
}

/// `/static/{name}`: revalidated on every use (`no-cache` with an `ETag`), so a new
/// daemon's scripts are never mixed with an old page's.
pub async fn static_file(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some(asset) = ASSETS.iter().find(|a| a.name == name) else {
        return ApiError::not_found(format!("no static file `{name}`")).into_response();
    };
    let etag = etag(asset.body);
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let etag = HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"0\""));
    let common = [
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (header::ETAG, etag),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    (
        common,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        )],
        asset.body,
    )
        .into_response()
}

/// A strong validator of an embedded file: the FNV-1a hash of its bytes, with the
/// daemon's version (a file is the same for as long as the binary is).
fn etag(body: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in body.bytes().chain(env!("CARGO_PKG_VERSION").bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("\"{h:016x}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a page pointing at a static file the server does not have (it would
    /// load without its script, silently).
    #[test]
    fn every_file_a_page_names_is_served() {
        for html in [WEBCHAT_PAGE, CONTROL_PAGE] {
            for part in html.split("static/").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
                    .collect();
                assert!(
                    ASSETS.iter().any(|a| a.name == name),
                    "static/{name} is not served"
                );
            }
        }
    }

    #[test]
    fn etags_differ_with_content() {
        assert_ne!(etag("a"), etag("b"));
        assert_eq!(etag("a"), etag("a"));
    }
}
