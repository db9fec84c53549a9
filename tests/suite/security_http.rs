//! The HTTP server's doors (README, Security: "Browser"): Origin and Host checks, where `?token=`
//! is accepted, the blank-token rule (the matrix over every route: `security_routes.rs`).

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::Method;
use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::common::{config_for, start, BIN, WAIT};

pub(crate) const EVIL: &str = "http://evil.example";

/// A request to `path` with `headers` and nothing else (no token unless given); returns
/// the status and the body.
pub(crate) async fn call(
    gw: &Gateway,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        map.insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    let mut req = gw
        .bare_http()
        .request(method.clone(), format!("{}{path}", gw.base_url()))
        .headers(map);
    if method == Method::POST {
        req = req.json(&json!({"text": "hello"}));
    }
    let r = req.send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

pub(crate) async fn status(
    gw: &Gateway,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> u16 {
    call(gw, method, path, headers).await.0
}

/// The WebSocket handshake's status for `/ws{query}` (101 when it upgrades).
pub(crate) async fn ws_status(gw: &Gateway, query: &str, headers: &[(&str, &str)]) -> u16 {
    ws_status_at(gw, "/ws", query, headers).await
}

/// The HTTP status of a WebSocket handshake on `path` (`/ws`, `/api/events`).
pub(crate) async fn ws_status_at(
    gw: &Gateway,
    path: &str,
    query: &str,
    headers: &[(&str, &str)],
) -> u16 {
    let url = format!(
        "{}{path}{query}",
        gw.base_url().replacen("http://", "ws://", 1)
    );
    let mut req = url.into_client_request().unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    match tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req))
        .await
        .expect("handshake timed out")
    {
        Ok((_, resp)) => resp.status().as_u16(),
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => resp.status().as_u16(),
        Err(e) => panic!("handshake failed: {e}"),
    }
}

/// `Authorization: Bearer <the daemon's generated token>`.
pub(crate) fn bearer(gw: &Gateway) -> String {
    format!(
        "Bearer {}",
        gw.token().expect("the daemon uses its generated token")
    )
}

/// `host:port` of the gateway.
fn authority(gw: &Gateway) -> String {
    gw.base_url().trim_start_matches("http://").to_string()
}

pub(crate) fn port(gw: &Gateway) -> String {
    authority(gw).rsplit(':').next().unwrap().to_string()
}

/// Catches: `/ws` and the API serving a page from any other site (no Origin check), which
/// lets any web page open in the operator's browser drive the agent.
#[tokio::test]
async fn a_foreign_origin_is_refused_by_the_page_the_socket_and_the_api() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let own = gw.base_url();
    let bearer = bearer(&gw);
    let auth = ("authorization", bearer.as_str());
    for (method, path) in [
        (Method::GET, "/"),
        (Method::GET, "/api/sessions"),
        (Method::GET, "/metrics"),
        (Method::POST, "/api/sessions/agent:main:main/messages"),
    ] {
        let (code, body) = call(&gw, method.clone(), path, &[auth, ("origin", EVIL)]).await;
        assert_eq!(code, 403, "{method} {path}: {body}");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert!(body["error"].as_str().unwrap().contains("Origin"), "{body}");
        let same = status(&gw, method.clone(), path, &[auth, ("origin", &own)]).await;
        assert!(
            same < 300,
            "{method} {path} from the daemon's own origin: {same}"
        );
        let none = status(&gw, method.clone(), path, &[auth]).await;
        assert!(none < 300, "{method} {path} without an Origin: {none}");
    }
    let token = format!("?chat=main&token={}", gw.token().unwrap());
    assert_eq!(ws_status(&gw, &token, &[("origin", EVIL)]).await, 403);
    assert_eq!(ws_status(&gw, &token, &[("origin", "null")]).await, 403);
    assert_eq!(ws_status(&gw, &token, &[("origin", &own)]).await, 101);
    assert_eq!(ws_status(&gw, &token, &[]).await, 101);
}

/// Catches: a missing `Host` check without a token (`gateway.auth.mode: "none"`; DNS
/// rebinding: a page on `evil.example` re-pointed to 127.0.0.1 is same-origin with itself).
#[tokio::test]
async fn dns_rebinding_hosts_are_refused_when_no_token_is_used() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"gateway": {"auth": {"mode": "none"}}})).await;
    let port = port(&gw);
    let evil_host = format!("evil.example:{port}");
    let evil_origin = format!("http://{evil_host}");
    for path in ["/", "/api/sessions"] {
        let (code, body) = call(&gw, Method::GET, path, &[("host", &evil_host)]).await;
        assert_eq!(code, 403, "{path}: {body}");
        assert!(body.contains("Host"), "{body}");
        let code = status(
            &gw,
            Method::GET,
            path,
            &[("host", &evil_host), ("origin", &evil_origin)],
        )
        .await;
        assert_eq!(code, 403, "{path} same-origin with the rebound name");
    }
    assert_eq!(
        ws_status(&gw, "?chat=main", &[("host", &evil_host)]).await,
        403
    );
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("127.3.4.5:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_string(),
    ] {
        let origin = format!("http://{host}");
        assert_eq!(
            status(&gw, Method::GET, "/api/sessions", &[("host", &host)]).await,
            200,
            "{host}"
        );
        assert_eq!(
            ws_status(&gw, "?chat=main", &[("host", &host), ("origin", &origin)]).await,
            101,
            "{host}"
        );
    }
}

/// Catches: `?token=` accepted by the API (it ends up in proxy and browser history logs)
/// and compared without percent-decoding (a token with `+`, `/` or non-ASCII never matched).
#[tokio::test]
async fn a_query_token_opens_the_page_and_the_socket_never_the_api() {
    let fake = FakeModel::start().await.unwrap();
    let token = "s3 cr+t/&=é";
    let encoded = "s3%20cr%2Bt%2F%26%3D%C3%A9";
    let gw = start(&fake, json!({"gateway": {"auth": {"token": token}}})).await;
    assert_eq!(
        ws_status(&gw, &format!("?chat=main&token={encoded}"), &[]).await,
        101
    );
    assert_eq!(
        ws_status(&gw, "?chat=main&token=s3%20cr%2Bt", &[]).await,
        401
    );
    assert_eq!(
        status(&gw, Method::GET, &format!("/?token={encoded}"), &[]).await,
        200
    );
    drop(gw);

    let gw = start(&fake, json!({"gateway": {"auth": {"token": "plain"}}})).await;
    for (method, path) in [
        (Method::GET, "/api/sessions?token=plain"),
        (Method::GET, "/metrics?token=plain"),
        (
            Method::POST,
            "/api/sessions/agent:main:main/messages?token=plain",
        ),
    ] {
        assert_eq!(status(&gw, method.clone(), path, &[]).await, 401, "{path}");
    }
    assert_eq!(ws_status(&gw, "?chat=main&token=plain", &[]).await, 101);
    assert_eq!(
        status(
            &gw,
            Method::GET,
            "/api/sessions",
            &[("authorization", "Bearer plain")]
        )
        .await,
        200
    );
}

async fn run_cli(args: &[&str], config: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json5");
    std::fs::write(&path, config).unwrap();
    let mut cmd = crate::common::cli(dir.path());
    cmd.args(args).arg(&path);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = crate::common::output(&mut cmd).await;
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Catches #20: `gateway.auth.token: ""` with `SWITCHBOARD_TOKEN` set served every route
/// without authentication, and `config validate` passed it with a public bind.
#[tokio::test]
async fn a_blank_configured_token_is_a_config_error_for_run_and_validate() {
    let env = [("SWITCHBOARD_TOKEN", "secret")];
    for token in ["", "   "] {
        let local = json!({"gateway": {"bind": "127.0.0.1", "port": 0, "auth": {"token": token}}})
            .to_string();
        let (code, err) = run_cli(&["run", "--config"], &local, &env).await;
        assert_eq!(code, Some(64), "run with token {token:?}: {err}");
        assert!(err.contains("gateway.auth.token"), "{err}");
        let (code, err) = run_cli(&["config", "validate"], &local, &env).await;
        assert_eq!(code, Some(64), "validate with token {token:?}: {err}");
        assert!(err.contains("gateway.auth.token"), "{err}");
        let public = json!({"gateway": {"bind": "0.0.0.0", "port": 0, "auth": {"token": token}}})
            .to_string();
        let (code, err) = run_cli(&["config", "validate"], &public, &env).await;
        assert_eq!(
            code,
            Some(64),
            "validate public bind, token {token:?}: {err}"
        );
    }
    // A public bind with a blank env token and no configured one: both refuse.
    let public = json!({"gateway": {"bind": "0.0.0.0", "port": 0}}).to_string();
    for args in [&["run", "--config"][..], &["config", "validate"][..]] {
        let (code, err) = run_cli(args, &public, &[("SWITCHBOARD_TOKEN", " ")]).await;
        assert_eq!(code, Some(64), "{args:?}: {err}");
        assert!(err.contains("gateway.bind"), "{err}");
    }
    let (code, err) = run_cli(&["config", "validate"], &public, &env).await;
    assert_eq!(code, Some(0), "{err}");
}

/// Catches: the `SWITCHBOARD_TOKEN` fallback not being applied when no token is
/// configured (the API must answer 401 without it).
#[tokio::test]
async fn the_env_token_guards_the_api_when_none_is_configured() {
    let fake = FakeModel::start().await.unwrap();
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(&fake, json!({})))
        .env("SWITCHBOARD_TOKEN", "from-env")
        .start()
        .await
        .unwrap();
    assert_eq!(status(&gw, Method::GET, "/api/sessions", &[]).await, 401);
    assert_eq!(
        status(
            &gw,
            Method::GET,
            "/api/sessions",
            &[("authorization", "Bearer from-env")]
        )
        .await,
        200
    );
}

/// Catches: the token echoed into a log line or an API answer (e.g. a logged request
/// URI with `?token=`, or a rejection that quotes what it was given).
#[tokio::test]
async fn the_token_never_reaches_a_log_line_or_an_api_answer() {
    let fake = FakeModel::start().await.unwrap();
    let token = "tok-7f3a9c1e";
    let gw = start(&fake, json!({"gateway": {"auth": {"token": token}}})).await;
    let auth = format!("Bearer {token}");
    let with = [("authorization", auth.as_str())];
    let mut answers = Vec::new();
    for path in [
        format!("/api/sessions?token={token}"),
        format!("/api/nope?token={token}"),
        "/api/sessions".to_string(),
        "/metrics".to_string(),
    ] {
        answers.push(call(&gw, Method::GET, &path, &[]).await.1);
        answers.push(call(&gw, Method::GET, &path, &with).await.1);
    }
    let (code, body) = call(
        &gw,
        Method::POST,
        "/api/sessions/agent:main:main/messages",
        &with,
    )
    .await;
    assert_eq!(code, 202, "{body}");
    answers.push(body);
    assert_eq!(
        ws_status(&gw, &format!("?chat=bad%20chat&token={token}"), &[]).await,
        400
    );
    assert_eq!(
        ws_status(&gw, &format!("?chat=main&token={token}x"), &[]).await,
        401
    );
    for answer in &answers {
        assert!(!answer.contains(token), "{answer}");
    }
    let logs = gw.stderr_lines().join("\n");
    assert!(!logs.contains(token), "{logs}");
}
