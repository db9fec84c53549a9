//! The HTTP side of the fake Telegram: `/bot<TOKEN>/<method>` routing, the token check, the
//! call log, the one-poll-at-a-time rule, and scripted failures.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State as Shared};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use axum::Router;
use serde_json::Value;

use super::listener::Conn;
use super::methods;
use super::state::{PollSlot, State};
use super::types::{Call, Failure};
use super::wire::{self, int, Reply};

/// Largest request body accepted: Telegram's own 50 MB limit for uploads, with room for the
/// multipart framing, so a bigger upload reaches `sendDocument`'s own 413.
const MAX_BODY_BYTES: usize = 51 * 1024 * 1024;

/// What Telegram says to the `getUpdates` that found another one in flight.
pub(super) const CONFLICT: &str = "Conflict: terminated by other getUpdates request; \
                                   make sure that only one bot instance is running";

pub(super) fn router(state: Arc<State>) -> Router {
    Router::new()
        .fallback(handle)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// How a call ends.
enum Outcome {
    Reply(Reply),
    /// The connection was cut; nothing will be written.
    Cut,
}

impl From<Reply> for Outcome {
    fn from(reply: Reply) -> Outcome {
        Outcome::Reply(reply)
    }
}

async fn handle(
    Shared(state): Shared<Arc<State>>,
    ConnectInfo(conn): ConnectInfo<Conn>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived = tokio::time::Instant::now();
    if let Some(rest) = uri.path().strip_prefix("/file/") {
        return super::files::download(&state, rest);
    }
    let Some((token, name)) = split_path(uri.path()) else {
        state.change(|world| {
            world.violation(format!("{method} {uri} is not a Bot API method path"));
        });
        return Reply::error(404, "Not Found").into_response();
    };
    let (name, known) = methods::canonical(&name);
    let authorized = token == state.token;
    let params = wire::params(&uri, &headers, &body);
    let uploads = wire::uploads(&headers, &body);
    let recorded = params
        .clone()
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let index = state.change(|world| {
        if authorized && name == "getUpdates" {
            world.offsets.push(int(&recorded, "offset").ok().flatten());
        }
        world.calls.push(Call {
            method: name.clone(),
            body: recorded,
            at: Instant::now(),
            status: 0,
            client: client_of(uri.path()),
        });
        world.calls.len() - 1
    });

    let outcome = if !authorized {
        Reply::error(401, "Unauthorized").into()
    } else if method != Method::POST && method != Method::GET {
        state.change(|world| world.violation(format!("{name} called with HTTP {method}")));
        Reply::error(405, "Method Not Allowed").into()
    } else {
        match params {
            Err(problem) => {
                state.change(|world| world.violation(format!("{name}: {problem}")));
                Reply::bad_request(problem).into()
            }
            Ok(_) if !known => {
                state.change(|world| world.violation(format!("call of unknown method {name}")));
                Reply::error(404, "Not Found: method not found").into()
            }
            Ok(params) => answer(&state, &conn, &name, &params, arrived, &uploads).await,
        }
    };
    match outcome {
        Outcome::Reply(reply) => {
            let status = reply.status();
            state.change(|world| world.calls[index].status = status);
            reply.into_response()
        }
        // The cut connection fails to write this.
        Outcome::Cut => Reply::error(500, "connection cut").into_response(),
    }
}

/// Plays the method's next scripted failure, if any, else answers it.
async fn answer(
    state: &Arc<State>,
    conn: &Conn,
    name: &str,
    params: &Value,
    arrived: tokio::time::Instant,
    uploads: &[crate::multipart::Part],
) -> Outcome {
    // Held until the answer is complete, or the client goes away and axum drops this future.
    let _slot = if name == "getUpdates" {
        match PollSlot::take(state) {
            Some(slot) => Some(slot),
            None => return Reply::error(409, CONFLICT).into(),
        }
    } else {
        None
    };
    let failure = state.change(|world| {
        world
            .failures
            .get_mut(&name.to_ascii_lowercase())
            .and_then(VecDeque::pop_front)
            .flatten()
    });
    match failure {
        None => {}
        Some(Failure::TooManyRequests { retry_after }) => {
            return Reply::Error {
                code: 429,
                description: format!("Too Many Requests: retry after {retry_after}"),
                retry_after: Some(retry_after),
            }
            .into();
        }
        Some(Failure::BadRequest(text)) => {
            return if text.starts_with("Bad Request") {
                Reply::error(400, text)
            } else {
                Reply::bad_request(text)
            }
            .into();
        }
        Some(Failure::Conflict) => return Reply::error(409, CONFLICT).into(),
        Some(Failure::ServerError(code)) => {
            return Reply::error(code, server_error_text(code)).into()
        }
        Some(Failure::Stall(pause)) => {
            let complete = wait(state, pause).await;
            if !complete {
                return shutting_down().into();
            }
        }
        Some(Failure::Hang) => {
            state.cancel.cancelled().await;
            return shutting_down().into();
        }
        Some(Failure::Drop) => {
            conn.cut();
            return Outcome::Cut;
        }
    }
    methods::dispatch(state, name, params, arrived, uploads)
        .await
        .into()
}

/// Sleeps `pause`; false when the fake shuts down meanwhile.
async fn wait(state: &State, pause: Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(pause) => true,
        () = state.cancel.cancelled() => false,
    }
}

fn shutting_down() -> Reply {
    Reply::error(
        503,
        "Service Unavailable: the fake Telegram is shutting down",
    )
}

fn server_error_text(code: u16) -> &'static str {
    match code {
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Server Error",
    }
}

/// The token and method of a `…/bot<TOKEN>/<method>` path (any prefix, e.g. a base URL with a
/// path, is allowed); percent-escapes are decoded.
fn split_path(path: &str) -> Option<(String, String)> {
    let mut segments = path.split('/').filter(|segment| !segment.is_empty()).rev();
    let method = percent_decode(segments.next()?);
    let token = percent_decode(segments.next()?)
        .strip_prefix("bot")?
        .to_owned();
    (!method.is_empty()).then_some((token, method))
}

/// The client tag of a call's path: the segments before `bot<TOKEN>/<method>`, joined.
fn client_of(path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let tag = segments.get(..segments.len().checked_sub(2)?)?.join("/");
    (!tag.is_empty()).then(|| percent_decode(&tag))
}

pub(super) fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| segment.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::split_path;

    #[test]
    fn splits_token_and_method() {
        let split = |path: &str| split_path(path);
        assert_eq!(
            split("/bot123:ABC/GetUpdates"),
            Some(("123:ABC".to_owned(), "GetUpdates".to_owned()))
        );
        assert_eq!(
            split("/api//bot123%3AABC/sendMessage"),
            Some(("123:ABC".to_owned(), "sendMessage".to_owned()))
        );
        assert_eq!(split("/file/bot1/photos/a.jpg"), None);
        assert_eq!(split("/"), None);
    }
}
