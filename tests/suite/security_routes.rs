//! The auth matrix: every row of the router's own route table (`server::ROUTES`) keeps the
//! doors its access says — token, Origin, Host, `?token=` — against the real binary.

use reqwest::Method;
use serde_json::json;
use switchboard::server::{Access, Route, ROUTES};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::Gateway;

use crate::common::start;
use crate::security_http::{port, status, ws_status_at, EVIL};

fn concrete(path: &str) -> String {
    path.replace("{key}", "agent:main:main")
        .replace("{id}", "no-such-id")
        .replace("{file}", "webchat.js")
}

fn method(route: &Route) -> Method {
    Method::from_bytes(route.verb.as_str().as_bytes()).unwrap()
}

/// Whether a request got past the doors (neither 401 nor 403).
fn passed(code: u16) -> bool {
    code != 401 && code != 403
}

/// A request through the doors: a WebSocket route (`/ws`, `/api/events`) as a real
/// handshake, the rest as plain requests.
async fn knock(gw: &Gateway, route: &Route, query: &str, headers: &[(&str, &str)]) -> u16 {
    if route.access == Access::Socket {
        let query = match query {
            "" => "?chat=main".to_string(),
            q => format!("{q}&chat=main"),
        };
        return ws_status_at(gw, route.path, &query, headers).await;
    }
    let path = format!("{}{query}", concrete(route.path));
    status(gw, method(route), &path, headers).await
}

/// Catches: any route added or changed without the doors its access needs — the matrix
/// walks the router's own table, so a new row is checked the day it is added.
#[tokio::test]
async fn every_route_keeps_its_doors_with_a_token() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"gateway": {
            "auth": {"token": "s3cret"},
            "allowedOrigins": ["https://chat.example.com"]
        }}),
    )
    .await;
    let bearer = [("authorization", "Bearer s3cret")];
    let wrong = [("authorization", "Bearer s3cre")];
    let evil = [("authorization", "Bearer s3cret"), ("origin", EVIL)];
    let listed = [
        ("authorization", "Bearer s3cret"),
        ("origin", "https://chat.example.com"),
    ];
    let foreign_host = [
        ("authorization", "Bearer s3cret"),
        ("host", "chat.example.com"),
    ];
    assert!(ROUTES.len() >= 12, "the table lost routes");
    for route in ROUTES {
        let name = format!(
            "{} {} ({:?})",
            route.verb.as_str(),
            route.path,
            route.access
        );
        let bare = knock(&gw, route, "", &[]).await;
        let right = knock(&gw, route, "", &bearer).await;
        assert!(passed(right), "{name} with the token: {right}");
        if route.access.needs_token() {
            assert_eq!(bare, 401, "{name} without a token");
            assert_eq!(
                knock(&gw, route, "", &wrong).await,
                401,
                "{name} wrong token"
            );
        } else {
            assert!(passed(bare), "{name} without a token: {bare}");
        }
        let code = knock(&gw, route, "", &evil).await;
        let code_no_token = knock(&gw, route, "", &[("origin", EVIL)]).await;
        if route.access.checks_origin() {
            assert_eq!(code, 403, "{name} foreign Origin with the token");
            assert_eq!(code_no_token, 403, "{name} foreign Origin without a token");
        } else {
            assert!(
                passed(code) && passed(code_no_token),
                "{name} ignores Origin"
            );
        }
        let code = knock(&gw, route, "", &listed).await;
        assert!(passed(code), "{name} from an allowed origin: {code}");
        let code = knock(&gw, route, "", &foreign_host).await;
        assert!(passed(code), "{name} any Host with a token: {code}");
        let code = knock(&gw, route, "?token=s3cret", &[]).await;
        match route.access {
            Access::Socket => assert_eq!(code, 101, "{name} ?token="),
            Access::Api => assert_eq!(code, 401, "{name} ?token="),
            _ => assert!(passed(code), "{name} ?token=: {code}"),
        }
    }
}

/// Catches: a route serving a non-loopback `Host` with `gateway.auth.mode: "none"` (DNS
/// rebinding), or `/healthz` and the Telegram webhook refusing one (probes and Telegram use
/// public names).
#[tokio::test]
async fn every_route_keeps_its_doors_without_a_token() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"gateway": {"auth": {"mode": "none"}}})).await;
    let evil_host = format!("evil.example:{}", port(&gw));
    for route in ROUTES {
        let name = format!("{} {}", route.verb.as_str(), route.path);
        let code = knock(&gw, route, "", &[]).await;
        assert!(passed(code), "{name} on 127.0.0.1 with no token: {code}");
        let code = knock(&gw, route, "", &[("host", &evil_host)]).await;
        if route.access.checks_host() {
            assert_eq!(code, 403, "{name} with Host {evil_host}");
        } else {
            assert!(passed(code), "{name} with Host {evil_host}: {code}");
        }
    }
}

/// The attack of the issue: any local user or process (a sandboxed command with network
/// too) reaching 127.0.0.1 read every transcript, drove every agent and answered the web
/// chat's approvals, because no token was configured. Now the daemon makes one: every
/// route that carries data refuses a request without it, on loopback too; the pages (which
/// hold nothing) and `/healthz` stay open, the webhook keeps its own secret.
/// Catches: any route of the table served on loopback without the generated token.
#[tokio::test]
async fn without_a_configured_token_every_route_needs_the_generated_one() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let token = gw.token().expect("the daemon made a token");
    let bearer = format!("Bearer {token}");
    let with = [("authorization", bearer.as_str())];
    let wrong = [("authorization", "Bearer ")];
    for route in ROUTES {
        let name = format!(
            "{} {} ({:?})",
            route.verb.as_str(),
            route.path,
            route.access
        );
        let bare = knock(&gw, route, "", &[]).await;
        match route.access {
            Access::Api | Access::Socket => {
                assert_eq!(bare, 401, "{name} without the token from 127.0.0.1");
                assert_eq!(
                    knock(&gw, route, "", &wrong).await,
                    401,
                    "{name} empty token"
                );
                let right = knock(&gw, route, "", &with).await;
                assert!(passed(right), "{name} with the token: {right}");
            }
            Access::Open | Access::Page => assert!(passed(bare), "{name}: {bare}"),
            // Its own secret header (none configured here: Telegram's webhook is off).
            Access::Webhook => assert!(bare != 200, "{name}: {bare}"),
        }
        if route.access == Access::Socket {
            let query = format!("?token={}", token);
            assert_eq!(knock(&gw, route, &query, &[]).await, 101, "{name} ?token=");
        }
    }
    // The file holding it: private to the daemon's user.
    let path = gw.state_dir().join("gateway.token");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "{}", path.display());
    assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), token);
}
