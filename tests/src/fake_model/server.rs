//! The HTTP side of the fake model: routes, recording each request, and playing its step.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State as Shared};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::Value;

use super::script::{Gate, Step};
use super::state::{InFlight, LoggedRequest, State};
use super::wire::{self, IssuedCall, Reply};
use super::{anthropic, anthropic_stream, lean, openai};

const OPENAI_PATH: &str = "/v1/chat/completions";
const ANTHROPIC_PATH: &str = "/v1/messages";
/// The model list both APIs serve: what `switchboard doctor` calls to see that a provider
/// is reachable and takes the key.
const MODELS_PATH: &str = "/v1/models";

/// Largest request body accepted: long agent histories in benchmarks exceed axum's 2 MB default.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Which API a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    OpenAi,
    Anthropic,
}

pub(super) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route(OPENAI_PATH, post(openai_route))
        .route(ANTHROPIC_PATH, post(anthropic_route))
        .route(MODELS_PATH, get(models_route))
        .route(
            "/v1/audio/transcriptions",
            post(super::media::transcriptions_route),
        )
        .fallback(unknown_route)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

async fn openai_route(
    Shared(state): Shared<Arc<State>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(state, Dialect::OpenAi, &uri, &headers, body).await
}

async fn anthropic_route(
    Shared(state): Shared<Arc<State>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(state, Dialect::Anthropic, &uri, &headers, body).await
}

/// The one scripted model, for a request with a key (`Authorization` or `x-api-key`);
/// 401 without one. Not recorded as a model request.
async fn models_route(headers: HeaderMap) -> Response {
    let keyed = headers.contains_key(header::AUTHORIZATION) || headers.contains_key("x-api-key");
    if !keyed {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(serde_json::json!({"error": {"message": "missing API key"}})),
        )
            .into_response();
    }
    axum::Json(serde_json::json!({
        "object": "list",
        "data": [{"id": "scripted", "object": "model", "type": "model"}],
    }))
    .into_response()
}

async fn unknown_route(Shared(state): Shared<Arc<State>>, method: Method, uri: Uri) -> Response {
    state.violation(format!("request to unknown route {method} {uri}"));
    StatusCode::NOT_FOUND.into_response()
}

/// Records the request with its violations, then plays the step the script picks for it.
/// The log keeps the raw body (`requests()` parses it when asked): a parsed body weighs
/// several times its text in small allocations, which a benchmark's thousands of requests
/// would pay for in the bench's own CPU.
async fn answer(
    state: Arc<State>,
    dialect: Dialect,
    uri: &Uri,
    headers: &HeaderMap,
    raw: Bytes,
) -> Response {
    let mut guard = InFlight::start(&state);
    let (body, mut problems) = if state.unchecked {
        (lean::without_tools(&raw).unwrap_or(Value::Null), Vec::new())
    } else {
        match serde_json::from_slice::<Value>(&raw) {
            Ok(body) => (body, Vec::new()),
            Err(error) => (
                Value::Null,
                vec![format!("body is not valid JSON: {error}")],
            ),
        }
    };
    // Without a parsed body only the header checks can say anything more.
    let check = problems.is_empty() && !state.unchecked;
    let (path, user_text) = match dialect {
        Dialect::OpenAi => {
            if check {
                problems.extend(openai::check(&body));
                problems.extend(super::media::check_images(&body, false));
            }
            (OPENAI_PATH, openai::last_user_text(&body))
        }
        Dialect::Anthropic => {
            if !state.unchecked {
                problems.extend(anthropic::check_headers(headers));
            }
            if check {
                problems.extend(anthropic::check(&body));
                problems.extend(super::media::check_images(&body, true));
            }
            (ANTHROPIC_PATH, anthropic::last_user_text(&body))
        }
    };
    guard.tag(&user_text);
    let header_text = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let request = LoggedRequest {
        path,
        raw,
        auth: header_text(header::AUTHORIZATION),
        api_key: header_text(header::HeaderName::from_static("x-api-key")),
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        query: uri.query().map(str::to_owned),
        at: std::time::Instant::now(),
    };
    state.record(request, problems);
    let window = state.window.load(std::sync::atomic::Ordering::Relaxed);
    if window > 0 {
        let refused = super::window::refusal(&body, dialect == Dialect::Anthropic, window);
        if let Some((code, body)) = refused {
            state
                .refused
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            guard.finish();
            return status(code, None, body);
        }
    }
    let step = state.script().next(&user_text);
    let streamed = body["stream"] == true;

    let (gates, delay, pace, play) = plan(&state, step);
    for gate in gates {
        let opened = tokio::select! {
            () = gate.opened() => true,
            () = state.cancel.cancelled() => false,
        };
        if !opened {
            guard.finish();
            return shutting_down();
        }
    }
    let reply = match play {
        Play::Reply(reply) => reply,
        Play::Hang => {
            state.cancel.cancelled().await;
            guard.finish();
            return shutting_down();
        }
        Play::Status {
            code,
            retry_after,
            body,
        } => {
            let complete = wait(&state, delay).await;
            guard.finish();
            return if complete {
                status(code, retry_after, body)
            } else {
                shutting_down()
            };
        }
        Play::Garbage(raw) => {
            let complete = wait(&state, delay).await;
            guard.finish();
            return if complete {
                garbage(raw, streamed)
            } else {
                shutting_down()
            };
        }
        Play::StatusWith {
            code,
            headers,
            body,
        } => {
            let complete = wait(&state, delay).await;
            guard.finish();
            return if complete {
                status_with(code, headers, body)
            } else {
                shutting_down()
            };
        }
        Play::Stream(chunks) => return sse(chunks, None, delay, pace, guard, &state),
        Play::Paused(chunks, gate) => {
            return sse(chunks, Some((1, gate)), delay, pace, guard, &state)
        }
    };

    let model = wire::model_of(&body);
    let number = state.response_number();
    match dialect {
        Dialect::OpenAi => {
            let usage = openai::usage(&body, &reply);
            let id = format!("chatcmpl-{number}");
            if streamed {
                let chunks = openai::chunks(&id, &model, &reply, usage);
                return sse(chunks, None, delay, pace, guard, &state);
            }
            let completion = openai::completion(&id, &model, &reply, usage);
            finish_json(guard, &state, delay, completion).await
        }
        Dialect::Anthropic => {
            let usage = anthropic::usage(&body, &reply);
            let id = format!("msg_{number}");
            let thinking = anthropic_stream::thinking_block(&body, &user_text);
            if streamed {
                let events =
                    anthropic_stream::events(&id, &model, &reply, usage, thinking.as_ref());
                return sse(events, None, delay, pace, guard, &state);
            }
            let message = anthropic::message(&id, &model, &reply, usage, thinking);
            finish_json(guard, &state, delay, message).await
        }
    }
}

/// A step with its delays taken off and its tool calls given ids.
#[derive(Debug)]
enum Play {
    Reply(Reply),
    Hang,
    Status {
        code: u16,
        retry_after: Option<u64>,
        body: String,
    },
    Garbage(String),
    StatusWith {
        code: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Raw SSE body chunks.
    Stream(Vec<Bytes>),
    /// Raw SSE body chunks, the second one sent once the gate is open.
    Paused(Vec<Bytes>, Gate),
}

/// Chunk size of [`Step::Flood`].
const FLOOD_CHUNK: usize = 64 * 1024;

/// The gates a step waits on, its total (nested) delay, and what to play after them.
fn plan(state: &State, mut step: Step) -> (Vec<Gate>, Duration, Duration, Play) {
    let mut delay = Duration::ZERO;
    let mut pace = Duration::ZERO;
    let mut gates = Vec::new();
    loop {
        let play = match step {
            Step::Gated(gate, inner) => {
                gates.push(gate);
                step = *inner;
                continue;
            }
            Step::Delay(more, inner) => {
                delay = delay.saturating_add(more);
                step = *inner;
                continue;
            }
            Step::Paced(every, inner) => {
                pace = every;
                step = *inner;
                continue;
            }
            Step::Text(text) => Play::Reply(Reply::Text(text)),
            Step::ToolCalls(calls) => Play::Reply(Reply::ToolCalls(
                calls
                    .into_iter()
                    .map(|call| IssuedCall {
                        id: state.call_id(),
                        name: call.name,
                        arguments: call.arguments,
                    })
                    .collect(),
            )),
            Step::Hang => Play::Hang,
            Step::Status {
                code,
                retry_after,
                body,
            } => Play::Status {
                code,
                retry_after,
                body,
            },
            Step::Garbage(raw) => Play::Garbage(raw),
            Step::StatusWith {
                code,
                headers,
                body,
            } => Play::StatusWith {
                code,
                headers,
                body,
            },
            Step::RawSse(chunks) => Play::Stream(chunks.into_iter().map(Bytes::from).collect()),
            Step::Paused { head, gate, tail } => Play::Paused(
                vec![
                    Bytes::from(super::script::content_chunk(&head)),
                    Bytes::from(super::script::content_chunk(&tail) + &super::script::stream_end()),
                ],
                gate,
            ),
            Step::Flood(bytes) => {
                // One shared buffer: the chunks are cheap clones of it.
                let full = Bytes::from(vec![b'x'; FLOOD_CHUNK]);
                let mut chunks = vec![full.clone(); bytes / FLOOD_CHUNK];
                if bytes % FLOOD_CHUNK > 0 {
                    chunks.push(full.slice(..bytes % FLOOD_CHUNK));
                }
                Play::Stream(chunks)
            }
        };
        return (gates, delay, pace, play);
    }
}

/// Sleeps `delay`; false when the server shuts down meanwhile.
async fn wait(state: &State, delay: Duration) -> bool {
    if delay.is_zero() {
        return true;
    }
    tokio::select! {
        () = tokio::time::sleep(delay) => true,
        () = state.cancel.cancelled() => false,
    }
}

async fn finish_json(mut guard: InFlight, state: &State, delay: Duration, body: Value) -> Response {
    let complete = wait(state, delay).await;
    guard.finish();
    if !complete {
        return shutting_down();
    }
    axum::Json(body).into_response()
}

fn shutting_down() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "fake model is shutting down",
    )
        .into_response()
}

fn status(code: u16, retry_after: Option<u64>, body: String) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or_else(|_| {
        tracing::warn!(code, "scripted status code is invalid; answering 500");
        StatusCode::INTERNAL_SERVER_ERROR
    });
    let content_type = if serde_json::from_str::<Value>(&body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut response = (code, [(header::CONTENT_TYPE, content_type)], body).into_response();
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// An error status with the headers as scripted (names and values not valid in HTTP are
/// skipped with a warning).
fn status_with(code: u16, headers: Vec<(String, String)>, body: String) -> Response {
    let mut response = status(code, None, body);
    for (name, value) in headers {
        match (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            (Ok(name), Ok(value)) => {
                response.headers_mut().insert(name, value);
            }
            _ => tracing::warn!(name, value, "scripted header is not valid HTTP; skipped"),
        }
    }
    response
}

/// A 200 whose content type promises what the client asked for, and whose body breaks it.
fn garbage(raw: String, streamed: bool) -> Response {
    let content_type = if streamed {
        "text/event-stream"
    } else {
        "application/json"
    };
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], raw).into_response()
}

/// A streamed answer: headers at once, the first chunk after `delay`, each next one
/// `pace` after the one before; with `pause`, chunk number `.0` also waits for the gate
/// `.1`. The in-flight guard lives in the body, so a client that goes away mid-stream
/// counts as dropped.
fn sse(
    chunks: Vec<Bytes>,
    pause: Option<(usize, Gate)>,
    delay: Duration,
    pace: Duration,
    guard: InFlight,
    state: &Arc<State>,
) -> Response {
    struct Progress {
        chunks: VecDeque<Bytes>,
        pause: Option<(usize, Gate)>,
        sent: usize,
        delay: Duration,
        pace: Duration,
        guard: InFlight,
        state: Arc<State>,
    }
    let progress = Progress {
        chunks: chunks.into(),
        pause,
        sent: 0,
        delay,
        pace,
        guard,
        state: Arc::clone(state),
    };
    let stream = futures::stream::unfold(progress, |mut progress| async move {
        let delay = std::mem::replace(&mut progress.delay, progress.pace);
        if !wait(&progress.state, delay).await {
            progress.guard.finish();
            return None;
        }
        if let Some((at, gate)) = &progress.pause {
            if *at == progress.sent {
                let opened = tokio::select! {
                    () = gate.opened() => true,
                    () = progress.state.cancel.cancelled() => false,
                };
                if !opened {
                    progress.guard.finish();
                    return None;
                }
            }
        }
        progress.sent += 1;
        match progress.chunks.pop_front() {
            Some(chunk) => Some((Ok::<_, Infallible>(chunk), progress)),
            None => {
                progress.guard.finish();
                None
            }
        }
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}
