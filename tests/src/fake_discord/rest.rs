//! The HTTP side of the fake Discord: `/api/v10/...` routing, the `Bot <token>` check, the
//! call log, scripted failures, `X-RateLimit-*` headers, and the gateway upgrade.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State as Shared};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};

use super::objects::unix_ms;
use super::routes;
use super::state::State;
use super::types::{Call, Failure};

/// Largest request body read: Discord's default 25 MB upload limit, with room for the
/// multipart framing, so a bigger upload reaches the 413 of `files::check_uploads`.
const MAX_BODY_BYTES: usize = 26 * 1024 * 1024;
/// What every successful answer claims about its bucket.
const BUCKET_LIMIT: u32 = 5;

/// `(method, path pattern after /api/v10/, route name)`; `{}` matches one segment. Routes
/// marked `*` in their name take no bot token (webhook and interaction tokens are in the path).
const ROUTES: &[(&str, &str, &str)] = &[
    ("GET", "gateway", "*getGateway"),
    ("GET", "gateway/bot", "getGatewayBot"),
    ("GET", "users/@me", "getCurrentUser"),
    ("GET", "oauth2/applications/@me", "getCurrentApplication"),
    ("GET", "applications/@me", "getCurrentApplication"),
    ("POST", "users/@me/channels", "createDm"),
    ("GET", "channels/{}", "getChannel"),
    ("POST", "channels/{}/messages", "createMessage"),
    ("PATCH", "channels/{}/messages/{}", "editMessage"),
    ("POST", "channels/{}/typing", "triggerTyping"),
    ("GET", "applications/{}/commands", "getGlobalCommands"),
    (
        "PUT",
        "applications/{}/commands",
        "bulkOverwriteGlobalCommands",
    ),
    ("POST", "applications/{}/commands", "createGlobalCommand"),
    (
        "GET",
        "applications/{}/guilds/{}/commands",
        "getGuildCommands",
    ),
    (
        "PUT",
        "applications/{}/guilds/{}/commands",
        "bulkOverwriteGuildCommands",
    ),
    (
        "POST",
        "applications/{}/guilds/{}/commands",
        "createGuildCommand",
    ),
    (
        "POST",
        "interactions/{}/{}/callback",
        "*createInteractionResponse",
    ),
    ("POST", "webhooks/{}/{}", "*createFollowupMessage"),
    (
        "GET",
        "webhooks/{}/{}/messages/@original",
        "*getOriginalInteractionResponse",
    ),
    (
        "PATCH",
        "webhooks/{}/{}/messages/@original",
        "*editOriginalInteractionResponse",
    ),
];

pub(super) fn router(state: Arc<State>) -> Router {
    Router::new().fallback(handle).with_state(state)
}

/// A REST answer: status and JSON body (`None` for 204).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) body: Option<Value>,
}

impl Reply {
    pub(super) fn ok(body: Value) -> Reply {
        Reply {
            status: 200,
            body: Some(body),
        }
    }

    pub(super) fn no_content() -> Reply {
        Reply {
            status: 204,
            body: None,
        }
    }

    /// `{"message": …, "code": …}` with this status.
    pub(super) fn error(status: u16, code: u32, message: &str) -> Reply {
        Reply {
            status,
            body: Some(json!({"message": message, "code": code})),
        }
    }

    /// 400 Invalid Form Body (50035) for one field.
    pub(super) fn invalid_form(field: &str, code: &str, message: &str) -> Reply {
        let mut errors = json!({"_errors": [{"code": code, "message": message}]});
        for key in field.rsplit('.') {
            errors = json!({ key: errors });
        }
        Reply {
            status: 400,
            body: Some(json!({"message": "Invalid Form Body", "code": 50035, "errors": errors})),
        }
    }
}

/// The route of `path` (after `/api/v10/`): `Ok((name, captures))`, or `Err(true)` when the
/// path is known but not with this method.
fn find_route(method: &Method, path: &str) -> Result<(&'static str, Vec<String>), bool> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut path_known = false;
    for (route_method, pattern, name) in ROUTES {
        let parts: Vec<&str> = pattern.split('/').collect();
        if parts.len() != segments.len() {
            continue;
        }
        let mut captures = Vec::new();
        let fits = parts.iter().zip(&segments).all(|(part, segment)| {
            if *part == "{}" {
                captures.push((*segment).to_owned());
                true
            } else {
                part == segment
            }
        });
        if !fits {
            continue;
        }
        if method.as_str() == *route_method {
            return Ok((name, captures));
        }
        path_known = true;
    }
    Err(path_known)
}

async fn handle(Shared(state): Shared<Arc<State>>, request: Request) -> Response {
    let wants_socket = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"));
    if wants_socket {
        return super::gateway::upgrade(state, request).await;
    }
    let method = request.method().clone();
    let target = request
        .uri()
        .path_and_query()
        .map_or_else(|| request.uri().path().to_owned(), ToString::to_string);
    let path = request.uri().path().to_owned();
    if let Some(rest) = path.strip_prefix("/attachments/") {
        return super::files::download(&state, rest);
    }
    let headers = request.headers().clone();
    let body = to_bytes(request.into_body(), MAX_BODY_BYTES)
        .await
        .unwrap_or_default();
    let multipart = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::multipart::boundary);
    let parsed = if let Some(boundary) = multipart {
        super::files::multipart_body(&state, &body, &boundary)
    } else if body.iter().all(u8::is_ascii_whitespace) {
        Ok(Value::Null)
    } else {
        serde_json::from_slice::<Value>(&body)
            .map_err(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    let route = path
        .strip_prefix("/api/v10/")
        .ok_or(false)
        .and_then(|rest| find_route(&method, rest));
    let name = route
        .as_ref()
        .map_or("unknown", |(name, _)| name.trim_start_matches('*'));
    let index = state.change(|world| {
        world.calls.push(Call {
            route: name.to_owned(),
            method: method.to_string(),
            path: target.clone(),
            body: parsed.clone().unwrap_or_else(|raw| raw),
            at: Instant::now(),
            status: 0,
        });
        world.calls.len() - 1
    });
    let reply = match route {
        Err(path_known) => {
            let (status, text) = if path_known {
                (405, "405: Method Not Allowed")
            } else {
                (404, "404: Not Found")
            };
            state.change(|world| world.violation(format!("{method} {target}: {text}")));
            Reply::error(status, 0, text)
        }
        Ok((route_name, captures)) => {
            let authorization = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok());
            if !route_name.starts_with('*') && !state.authorized(authorization) {
                Reply::error(401, 0, "401: Unauthorized")
            } else {
                match answer(&state, name, &captures, parsed).await {
                    Some(reply) => reply,
                    None => Reply::error(503, 0, "503: Service Unavailable"),
                }
            }
        }
    };
    state.change(|world| world.calls[index].status = reply.status);
    respond(reply, name)
}

/// Plays the route's next scripted failure, if any, else answers it. `None` when a hanging
/// answer was ended by shutdown.
async fn answer(
    state: &Arc<State>,
    name: &str,
    captures: &[String],
    body: Result<Value, Value>,
) -> Option<Reply> {
    let failure = state.change(|world| {
        world
            .failures
            .get_mut(&name.to_ascii_lowercase())
            .and_then(VecDeque::pop_front)
    });
    match failure {
        None => {}
        Some(Failure::RateLimited {
            retry_after_secs,
            global,
        }) => return Some(rate_limited(retry_after_secs, global)),
        Some(Failure::ServerError(status)) => {
            let reason = StatusCode::from_u16(status)
                .ok()
                .and_then(|code| code.canonical_reason())
                .unwrap_or("Server Error");
            return Some(Reply::error(status, 0, &format!("{status}: {reason}")));
        }
        Some(Failure::Hang) => {
            state.cancel.cancelled().await;
            return None;
        }
    }
    let body = match body {
        Ok(body) => body,
        Err(raw) => {
            state.change(|world| {
                world.violation(format!("{name}: the body is not JSON: {raw:.200}"))
            });
            return Some(Reply::error(
                400,
                50109,
                "The request body contains invalid JSON.",
            ));
        }
    };
    Some(routes::dispatch(state, name, captures, &body))
}

/// 429 with Discord's body and headers.
fn rate_limited(retry_after: f64, global: bool) -> Reply {
    let body = json!({
        "message": "You are being rate limited.",
        "retry_after": retry_after,
        "global": global,
    });
    Reply {
        status: 429,
        body: Some(body),
    }
}

/// A stable bucket id for a route.
fn bucket(route: &str) -> String {
    let hash = route.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

fn respond(reply: Reply, route: &str) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match &reply.body {
        Some(body) => (status, axum::Json(body.clone())).into_response(),
        None => (status, Body::empty()).into_response(),
    };
    if route == "unknown" || reply.status == 401 {
        return response;
    }
    let (remaining, reset_after) = match (reply.status, &reply.body) {
        (429, Some(body)) => (0, body["retry_after"].as_f64().unwrap_or(1.0)),
        _ => (BUCKET_LIMIT - 1, 1.0),
    };
    let reset = unix_ms() as f64 / 1000.0 + reset_after;
    let global = reply.status == 429
        && reply
            .body
            .as_ref()
            .is_some_and(|b| b["global"] == json!(true));
    let mut pairs = vec![
        ("x-ratelimit-limit", BUCKET_LIMIT.to_string()),
        ("x-ratelimit-remaining", remaining.to_string()),
        ("x-ratelimit-reset", format!("{reset:.3}")),
        ("x-ratelimit-reset-after", format!("{reset_after:.3}")),
        ("x-ratelimit-bucket", bucket(route)),
    ];
    if reply.status == 429 {
        pairs.push(("retry-after", format!("{}", reset_after.ceil() as u64)));
        pairs.push((
            "x-ratelimit-scope",
            if global { "global" } else { "user" }.to_owned(),
        ));
        if global {
            pairs.push(("x-ratelimit-global", "true".to_owned()));
        }
    }
    for (name, value) in pairs {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
