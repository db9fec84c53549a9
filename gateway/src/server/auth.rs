//! The doors of every route but `/healthz` (README, Security): another site's `Origin` is
//! refused (403), so is a non-loopback `Host` when there is no token (`gateway.auth.mode:
//! "none"`; DNS rebinding), then the bearer token is checked (401), on loopback too — from
//! `Authorization`, or `?token=` on the sockets only.

use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::Response;
use serde::Deserialize;
// The one constant-time comparison of secrets, shared with the Telegram webhook.
use switchboard_channels::secret_eq as constant_time_eq;

use super::error::ApiError;
use super::routes::Access;
use crate::config::origin::{Authority, SiteOrigin};
use crate::config::GatewayConfig;

/// What the doors check against, fixed at start (`gateway.*` needs a restart).
#[derive(Debug, Default)]
pub struct Doors {
    token: Option<Arc<str>>,
    allowed_origins: Vec<SiteOrigin>,
}

/// Why a request was turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("Origin not allowed: this daemon refuses requests from other sites' pages; list the site in gateway.allowedOrigins to allow it")]
    ForeignOrigin,
    #[error("Host not allowed: with gateway.auth.mode \"none\", only localhost, 127.0.0.0/8 and [::1] are served (DNS rebinding protection); use a token to serve other names")]
    ForeignHost,
    #[error("missing or wrong bearer token (send `Authorization: Bearer <token>`)")]
    Unauthorized,
    #[error("missing bearer token: the API takes it only in the `Authorization: Bearer` header, never as ?token=")]
    QueryTokenOnApi,
}

impl Refusal {
    pub fn status(self) -> StatusCode {
        match self {
            Refusal::ForeignOrigin | Refusal::ForeignHost => StatusCode::FORBIDDEN,
            Refusal::Unauthorized | Refusal::QueryTokenOnApi => StatusCode::UNAUTHORIZED,
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> Self {
        ApiError::new(r.status(), r.to_string())
    }
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

impl Doors {
    /// `token`: the effective one (see `AuthConfig::effective_token`); `allowed_origins`
    /// as validated from `gateway.allowedOrigins`.
    pub fn new(token: Option<String>, allowed_origins: Vec<SiteOrigin>) -> Doors {
        Doors {
            token: token.map(Arc::from),
            allowed_origins,
        }
    }

    /// From the validated config's allowed origins and the token in force
    /// (`token_file::for_daemon`: configured, generated, or none with `mode: "none"`).
    pub fn from_config(g: &GatewayConfig, token: Option<String>) -> Doors {
        // The config was validated: every allowed origin parses.
        let origins = g
            .allowed_origins
            .iter()
            .filter_map(|o| SiteOrigin::parse(o).ok())
            .collect();
        Doors::new(token, origins)
    }

    /// Whether a token is required at all.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// The doors for one request to a route of `access`.
    pub fn check(&self, access: Access, headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
        let host = host_of(headers, uri);
        if access.checks_host()
            && self.token.is_none()
            && !host.as_ref().is_some_and(Authority::is_loopback)
        {
            return Err(Refusal::ForeignHost);
        }
        if access.checks_origin() {
            self.check_origin(headers, host.as_ref())?;
        }
        match self.token.as_deref() {
            Some(expected) if access.needs_token() => check_token(access, expected, headers, uri),
            _ => Ok(()),
        }
    }

    /// No `Origin` (curl, scripts, same-origin navigations) passes; one must be the
    /// daemon's own (`http://` + the request's `Host`) or listed.
    fn check_origin(&self, headers: &HeaderMap, host: Option<&Authority>) -> Result<(), Refusal> {
        let mut values = headers.get_all(header::ORIGIN).iter();
        let Some(value) = values.next() else {
            return Ok(());
        };
        if values.next().is_some() {
            return Err(Refusal::ForeignOrigin);
        }
        let origin = value
            .to_str()
            .ok()
            .and_then(|v| SiteOrigin::parse(v).ok())
            .ok_or(Refusal::ForeignOrigin)?;
        let own = host.map(SiteOrigin::of_host);
        if own.as_ref() == Some(&origin) || self.allowed_origins.contains(&origin) {
            Ok(())
        } else {
            Err(Refusal::ForeignOrigin)
        }
    }
}

/// The request's `Host` header (HTTP/1.1), else its URI authority (HTTP/2); `None`
/// when missing, repeated or malformed.
fn host_of(headers: &HeaderMap, uri: &Uri) -> Option<Authority> {
    let mut values = headers.get_all(header::HOST).iter();
    let raw = match (values.next(), values.next()) {
        (Some(v), None) => v.to_str().ok()?,
        (None, _) => uri.authority()?.as_str(),
        (Some(_), Some(_)) => return None,
    };
    Authority::parse(raw).ok()
}

fn check_token(
    access: Access,
    expected: &str,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<(), Refusal> {
    let query_token = || {
        Query::<TokenQuery>::try_from_uri(uri)
            .ok()
            .and_then(|q| q.0.token)
    };
    let given = match bearer(headers) {
        Some(t) => Some(t.to_vec()),
        None if access.takes_query_token() => query_token().map(String::into_bytes),
        None => {
            if query_token().is_some() {
                return Err(Refusal::QueryTokenOnApi);
            }
            None
        }
    };
    match given {
        Some(g) if constant_time_eq(&g, expected.as_bytes()) => Ok(()),
        _ => Err(Refusal::Unauthorized),
    }
}

/// `Authorization: Bearer <token>` (the scheme name is case-insensitive). Bytes, not
/// text: a UTF-8 token arrives as its raw bytes.
fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let v = headers.get(header::AUTHORIZATION)?.as_bytes();
    let space = v.iter().position(|&b| b == b' ')?;
    let (scheme, token) = v.split_at(space);
    scheme
        .eq_ignore_ascii_case(b"bearer")
        .then(|| token.get(1..))
        .flatten()
}

/// The middleware's state: the shared doors and the access of the route it guards.
#[derive(Clone)]
pub struct Guard {
    pub doors: Arc<Doors>,
    pub access: Access,
}

pub async fn guard(State(g): State<Guard>, req: Request, next: Next) -> Result<Response, ApiError> {
    g.doors.check(g.access, req.headers(), req.uri())?;
    Ok(next.run(req).await)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).expect("header value"));
        }
        h
    }

    fn check(
        doors: &Doors,
        access: Access,
        uri: &str,
        pairs: &[(&'static str, &str)],
    ) -> Result<(), Refusal> {
        let uri: Uri = uri.parse().expect("uri");
        doors.check(access, &headers(pairs), &uri)
    }

    const HOST: (&str, &str) = ("host", "127.0.0.1:18789");

    /// Catches: comparing secrets with `==` (or an early exit), or a prefix passing.
    #[test]
    fn constant_time_eq_is_exact() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        for wrong in [
            &b""[..],
            b"s3cre",
            b"s3cret!",
            b"S3cret",
            b"s3cres",
            b"s3crets3cret",
        ] {
            assert!(!constant_time_eq(wrong, b"s3cret"), "{wrong:?}");
        }
        assert!(!constant_time_eq(b"x", b""));
    }

    /// Catches: the API taking `?token=`, or a header-less socket refused its query token.
    #[test]
    fn query_tokens_open_the_socket_only() {
        let doors = Doors::new(Some("a+b é".into()), vec![]);
        let q = "?token=a%2Bb%20%C3%A9";
        assert_eq!(
            check(&doors, Access::Socket, &format!("/ws{q}&chat=x"), &[HOST]),
            Ok(())
        );
        assert_eq!(
            check(&doors, Access::Socket, "/ws?token=a+b+%C3%A9", &[HOST]),
            Err(Refusal::Unauthorized)
        );
        assert_eq!(
            check(&doors, Access::Api, &format!("/api/sessions{q}"), &[HOST]),
            Err(Refusal::QueryTokenOnApi)
        );
        assert_eq!(
            check(&doors, Access::Page, &format!("/{q}"), &[HOST]),
            Ok(())
        );
        assert_eq!(check(&doors, Access::Page, "/", &[HOST]), Ok(()));
        let bearer = ("authorization", "bearer a+b é");
        assert_eq!(
            check(&doors, Access::Api, "/api/sessions", &[HOST, bearer]),
            Ok(())
        );
        // Two `token` parameters are ambiguous: neither counts.
        assert_eq!(
            check(&doors, Access::Socket, &format!("/ws{q}&token=x"), &[HOST]),
            Err(Refusal::Unauthorized)
        );
    }

    /// Catches: a missing Origin check, or one that trusts a listed-but-different port.
    #[test]
    fn origins_must_be_own_or_listed() {
        let listed = SiteOrigin::parse("https://chat.example.com").expect("origin");
        let doors = Doors::new(None, vec![listed]);
        for access in [Access::Page, Access::Socket, Access::Api, Access::Webhook] {
            let ok = |o: &str| check(&doors, access, "/", &[HOST, ("origin", o)]);
            assert_eq!(ok("http://127.0.0.1:18789"), Ok(()));
            assert_eq!(ok("https://chat.example.com:443"), Ok(()));
            for bad in [
                "http://evil.example",
                "null",
                "http://127.0.0.1:18790",
                "https://127.0.0.1:18789",
                "https://chat.example.com:8443",
                "garbage",
            ] {
                assert_eq!(ok(bad), Err(Refusal::ForeignOrigin), "{access:?} {bad}");
            }
        }
        let twice = [
            HOST,
            ("origin", "http://127.0.0.1:18789"),
            ("origin", "http://127.0.0.1:18789"),
        ];
        assert_eq!(
            check(&doors, Access::Api, "/", &twice),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            check(
                &doors,
                Access::Open,
                "/healthz",
                &[("origin", "http://evil.example")]
            ),
            Ok(())
        );
    }

    /// Catches: serving a rebound name without a token, or refusing it with one.
    #[test]
    fn non_loopback_hosts_need_a_token() {
        let open = Doors::new(None, vec![]);
        let evil = [("host", "evil.example:18789")];
        for access in [Access::Page, Access::Socket, Access::Api] {
            assert_eq!(check(&open, access, "/", &evil), Err(Refusal::ForeignHost));
            assert_eq!(
                check(&open, access, "/", &[]),
                Err(Refusal::ForeignHost),
                "no Host"
            );
            assert_eq!(check(&open, access, "/", &[("host", "localhost")]), Ok(()));
        }
        assert_eq!(check(&open, Access::Webhook, "/", &evil), Ok(()));
        let closed = Doors::new(Some("t".into()), vec![]);
        let with = [
            ("host", "evil.example:18789"),
            ("authorization", "Bearer t"),
        ];
        assert_eq!(check(&closed, Access::Api, "/", &with), Ok(()));
        assert_eq!(
            check(&closed, Access::Api, "/", &evil),
            Err(Refusal::Unauthorized)
        );
        assert_eq!(check(&closed, Access::Page, "/", &evil), Ok(()));
        assert_eq!(check(&closed, Access::Open, "/", &evil), Ok(()));
    }
}
