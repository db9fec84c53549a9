//! The Web API: `POST /api/<method>` with a bearer token (the bot token `xoxb-…`, the app
//! token `xapp-…` for `apps.connections.open`), JSON or form bodies, answers
//! `{ok:true,…}` or `{ok:false,error}` (HTTP 200, as Slack does), 429 with `Retry-After`,
//! the upload URL of `files.getUploadURLExternal`, and shared files (`shared`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State as Axum};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use serde_json::{json, Map, Value};

use super::state::{Msg, PendingFile, State, World};
use super::types::{
    Call, Ephemeral, Failure, Posted, Update, Upload, BOT_ID, BOT_USER, MAX_ACTION_ID, MAX_BLOCKS,
    MAX_BUTTON_LABEL, MAX_SECTION_CHARS, MAX_TEXT_CHARS, TEAM_ID,
};

/// The largest upload the fake takes (Slack: 1 GB).
const MAX_UPLOAD: u64 = 1 << 30;

pub(super) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/api/{method}", post(method))
        .route("/upload/{file}", post(upload))
        .route("/files-pri/{*rest}", get(super::shared::download))
        .route("/link/", any(super::socket::upgrade))
        .fallback(unknown)
        .with_state(state)
}

async fn unknown(Axum(state): Axum<Arc<State>>, uri: axum::http::Uri) -> Response {
    state.change(|w| w.violation(format!("request to an unknown path {uri}")));
    (StatusCode::NOT_FOUND, "not found").into_response()
}

fn answer(body: Value) -> Response {
    axum::Json(body).into_response()
}

fn error(error: &str) -> Value {
    json!({"ok": false, "error": error})
}

/// The body as a JSON object: JSON as is, a form as string fields.
fn params(headers: &HeaderMap, body: &[u8]) -> Result<Map<String, Value>, String> {
    let kind = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if body.is_empty() {
        return Ok(Map::new());
    }
    if kind.starts_with("application/json") {
        return match serde_json::from_slice(body) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err("a JSON body that is not an object".into()),
        };
    }
    if kind.starts_with("application/x-www-form-urlencoded") {
        let text = String::from_utf8_lossy(body);
        let url = reqwest::Url::parse(&format!("http://x/?{text}")).map_err(|e| e.to_string())?;
        return Ok(url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
            .collect());
    }
    Err(format!("a body of content type {kind:?}"))
}

fn str_of<'a>(p: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    p.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

async fn method(
    Axum(state): Axum<Arc<State>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let base = state.base.clone();
    let (bot, app) = (state.bot_token.clone(), state.app_token.clone());
    state.change(|w| {
        let (response, outcome) = call(
            w,
            &method,
            token.as_deref(),
            &bot,
            &app,
            &headers,
            &body,
            &base,
        );
        w.calls.push(Call {
            method: method.clone(),
            outcome,
        });
        response
    })
}

#[allow(clippy::too_many_arguments)]
fn call(
    w: &mut World,
    method: &str,
    token: Option<&str>,
    bot: &str,
    app: &str,
    headers: &HeaderMap,
    body: &[u8],
    base: &str,
) -> (Response, String) {
    let now = Instant::now();
    if let Some(until) = w.limited_until.get(method).copied() {
        if now < until {
            w.violation(format!(
                "{method} called again {:?} before its Retry-After ended",
                until - now
            ));
            return (limited(until - now), "ratelimited".into());
        }
    }
    if let Some(f) = w.failures.get_mut(method).and_then(|q| q.pop_front()) {
        return match f {
            Failure::RateLimited(secs) => {
                w.limited_until
                    .insert(method.to_owned(), now + Duration::from_secs(secs));
                (limited(Duration::from_secs(secs)), "ratelimited".into())
            }
            Failure::Error(e) => (answer(error(&e)), e),
            Failure::Status(code) => (
                (
                    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                    axum::Json(error("internal_error")),
                )
                    .into_response(),
                format!("status {code}"),
            ),
        };
    }
    let wanted = if method == "apps.connections.open" {
        app
    } else {
        bot
    };
    match token {
        None => return (answer(error("not_authed")), "not_authed".into()),
        Some(t) if t == wanted => {}
        Some(t) if t == app || t == bot => {
            return (
                answer(error("not_allowed_token_type")),
                "not_allowed_token_type".into(),
            )
        }
        Some(_) => return (answer(error("invalid_auth")), "invalid_auth".into()),
    }
    let p = match params(headers, body) {
        Ok(p) => p,
        Err(e) => {
            w.violation(format!("{method}: {e}"));
            return (
                answer(error("invalid_arguments")),
                "invalid_arguments".into(),
            );
        }
    };
    let result = match method {
        "auth.test" => Ok(json!({"url": "https://fake.slack.invalid/", "team": "fake",
            "user": "switchboard", "team_id": TEAM_ID, "user_id": BOT_USER, "bot_id": BOT_ID})),
        "apps.connections.open" => {
            let ticket = w.id("ticket-");
            w.tickets.insert(ticket.clone());
            let ws = base.replacen("http://", "ws://", 1);
            Ok(json!({"url": format!("{ws}/link/?ticket={ticket}")}))
        }
        "chat.postMessage" => post_message(w, &p),
        "chat.update" => update(w, &p),
        "chat.postEphemeral" => ephemeral(w, &p),
        "files.getUploadURLExternal" => upload_url(w, &p, base),
        "files.completeUploadExternal" => complete_upload(w, &p),
        "files.info" => super::shared::info(w, &p),
        other => {
            w.violation(format!("unknown Web API method {other}"));
            Err("unknown_method".to_owned())
        }
    };
    match result {
        Ok(mut v) => {
            if let Some(o) = v.as_object_mut() {
                o.insert("ok".into(), Value::Bool(true));
            }
            (answer(v), "ok".into())
        }
        Err(e) => (answer(error(&e)), e),
    }
}

fn limited(after: Duration) -> Response {
    let secs = after.as_secs_f64().ceil().max(1.0) as u64;
    (
        StatusCode::TOO_MANY_REQUESTS,
        [("retry-after", secs.to_string())],
        axum::Json(error("ratelimited")),
    )
        .into_response()
}

/// Checks `blocks` as Slack's Block Kit validation would; a bad block is a violation.
fn check_blocks(w: &mut World, method: &str, blocks: &Value) -> Result<(), String> {
    let bad = |w: &mut World, why: String| {
        w.violation(format!("{method}: invalid_blocks: {why}"));
        Err("invalid_blocks".to_owned())
    };
    let Some(list) = blocks.as_array() else {
        return bad(w, "blocks is not an array".into());
    };
    if list.len() > MAX_BLOCKS {
        return bad(w, format!("{} blocks", list.len()));
    }
    for b in list {
        match b["type"].as_str() {
            Some("section") => {
                let text = b["text"]["text"].as_str().unwrap_or_default();
                if text.is_empty() || text.chars().count() > MAX_SECTION_CHARS {
                    return bad(w, format!("section text of {} chars", text.chars().count()));
                }
            }
            Some("actions") => {
                let els = b["elements"].as_array().cloned().unwrap_or_default();
                if els.is_empty() || els.len() > 25 {
                    return bad(w, format!("{} action elements", els.len()));
                }
                for e in els {
                    let label = e["text"]["text"].as_str().unwrap_or_default();
                    let id = e["action_id"].as_str().unwrap_or_default();
                    if e["type"] != "button"
                        || e["text"]["type"] != "plain_text"
                        || label.is_empty()
                        || label.chars().count() > MAX_BUTTON_LABEL
                        || id.is_empty()
                        || id.len() > MAX_ACTION_ID
                    {
                        return bad(w, format!("button {e}"));
                    }
                }
            }
            other => return bad(w, format!("block type {other:?}")),
        }
    }
    Ok(())
}

fn text_and_blocks(
    w: &mut World,
    method: &str,
    p: &Map<String, Value>,
) -> Result<(String, Option<Value>), String> {
    let text = str_of(p, "text").unwrap_or_default().to_owned();
    let blocks = match p.get("blocks") {
        None | Some(Value::Null) => None,
        // Form bodies carry blocks as a JSON string.
        Some(Value::String(s)) => Some(serde_json::from_str(s).map_err(|_| "invalid_blocks")?),
        Some(b) => Some(b.clone()),
    };
    if let Some(b) = &blocks {
        check_blocks(w, method, b)?;
    }
    let empty_blocks = blocks
        .as_ref()
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if text.is_empty() && empty_blocks {
        return Err("no_text".into());
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        w.violation(format!("{method}: text of {} chars", text.chars().count()));
        return Err("msg_too_long".into());
    }
    Ok((text, blocks))
}

fn post_message(w: &mut World, p: &Map<String, Value>) -> Result<Value, String> {
    let channel = str_of(p, "channel").ok_or("channel_not_found")?.to_owned();
    if !w.channels.contains_key(&channel) {
        return Err("channel_not_found".into());
    }
    let (text, blocks) = text_and_blocks(w, "chat.postMessage", p)?;
    let thread_ts = str_of(p, "thread_ts").map(str::to_owned);
    if let Some(t) = &thread_ts {
        let known = w.channels[&channel].iter().any(|m| &m.ts == t);
        if !known {
            w.violation(format!(
                "chat.postMessage: thread_ts {t} of no message in {channel}"
            ));
        }
    }
    let ts = w.ts();
    if let Some(msgs) = w.channels.get_mut(&channel) {
        msgs.push(Msg {
            ts: ts.clone(),
            by_bot: true,
        });
    }
    w.posted.push(Posted {
        channel: channel.clone(),
        ts: ts.clone(),
        thread_ts,
        text: text.clone(),
        blocks,
    });
    Ok(json!({"channel": channel, "ts": ts,
              "message": {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "text": text, "ts": ts}}))
}

fn update(w: &mut World, p: &Map<String, Value>) -> Result<Value, String> {
    let channel = str_of(p, "channel").ok_or("channel_not_found")?.to_owned();
    let ts = str_of(p, "ts").ok_or("message_not_found")?.to_owned();
    let Some(msgs) = w.channels.get(&channel) else {
        return Err("channel_not_found".into());
    };
    match msgs.iter().find(|m| m.ts == ts) {
        None => return Err("message_not_found".into()),
        Some(m) if !m.by_bot => return Err("cant_update_message".into()),
        Some(_) => {}
    }
    let (text, blocks) = text_and_blocks(w, "chat.update", p)?;
    if let Some(m) = w.posted.iter_mut().find(|m| m.ts == ts) {
        m.text = text.clone();
        m.blocks = blocks.clone();
    }
    w.updates.push(Update {
        channel: channel.clone(),
        ts: ts.clone(),
        text: text.clone(),
        blocks,
    });
    Ok(json!({"channel": channel, "ts": ts, "text": text}))
}

fn ephemeral(w: &mut World, p: &Map<String, Value>) -> Result<Value, String> {
    let channel = str_of(p, "channel").ok_or("channel_not_found")?.to_owned();
    if !w.channels.contains_key(&channel) {
        return Err("channel_not_found".into());
    }
    let user = str_of(p, "user").ok_or("user_not_in_channel")?.to_owned();
    let (text, _) = text_and_blocks(w, "chat.postEphemeral", p)?;
    w.ephemerals.push(Ephemeral {
        channel,
        user,
        text,
    });
    Ok(json!({"message_ts": w.ts()}))
}

fn upload_url(w: &mut World, p: &Map<String, Value>, base: &str) -> Result<Value, String> {
    let filename = str_of(p, "filename").ok_or("invalid_arguments")?.to_owned();
    let length = match p.get("length") {
        Some(Value::String(s)) => s.parse::<u64>().ok(),
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    }
    .filter(|l| *l > 0)
    .ok_or("invalid_arguments")?;
    if length > MAX_UPLOAD {
        return Err("file_too_large".into());
    }
    let file_id = w.id("F");
    w.files.insert(
        file_id.clone(),
        PendingFile {
            filename,
            length,
            bytes: None,
        },
    );
    Ok(json!({"upload_url": format!("{base}/upload/{file_id}"), "file_id": file_id}))
}

async fn upload(
    Axum(state): Axum<Arc<State>>,
    Path(file): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let kind = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = match crate::multipart::boundary(&kind) {
        Some(b) => match crate::multipart::parse(&body, &b) {
            Ok(parts) => parts
                .into_iter()
                .find(|p| p.filename.is_some())
                .map(|p| p.data)
                .unwrap_or_default(),
            Err(e) => {
                state.change(|w| w.violation(format!("upload {file}: bad multipart: {e}")));
                return (StatusCode::BAD_REQUEST, "bad multipart").into_response();
            }
        },
        None => body.to_vec(),
    };
    state.change(|w| {
        let Some(f) = w.files.get_mut(&file) else {
            w.violation(format!("upload to an unknown file id {file}"));
            return (StatusCode::NOT_FOUND, "unknown file").into_response();
        };
        if f.length != bytes.len() as u64 {
            let declared = f.length;
            w.violation(format!(
                "upload {file}: {} bytes, {declared} declared in files.getUploadURLExternal",
                bytes.len()
            ));
            return (StatusCode::BAD_REQUEST, "length mismatch").into_response();
        }
        let len = bytes.len();
        f.bytes = Some(bytes);
        (StatusCode::OK, format!("OK - {len}")).into_response()
    })
}

fn complete_upload(w: &mut World, p: &Map<String, Value>) -> Result<Value, String> {
    let files: Vec<Value> = match p.get("files") {
        Some(Value::String(s)) => serde_json::from_str(s).map_err(|_| "invalid_arguments")?,
        Some(Value::Array(a)) => a.clone(),
        _ => return Err("invalid_arguments".into()),
    };
    let channel = str_of(p, "channel_id").map(str::to_owned);
    if let Some(c) = &channel {
        if !w.channels.contains_key(c) {
            return Err("channel_not_found".into());
        }
    }
    let thread_ts = str_of(p, "thread_ts").map(str::to_owned);
    let comment = str_of(p, "initial_comment").map(str::to_owned);
    let mut done = Vec::new();
    for f in &files {
        let id = f["id"].as_str().unwrap_or_default();
        let Some(pending) = w.files.get(id).cloned() else {
            return Err("file_not_found".into());
        };
        let Some(bytes) = pending.bytes else {
            w.violation(format!(
                "files.completeUploadExternal of {id} before its upload"
            ));
            return Err("file_not_found".into());
        };
        w.files.remove(id);
        done.push(json!({"id": id, "name": pending.filename}));
        if let Some(c) = &channel {
            w.uploads.push(Upload {
                file_id: id.to_owned(),
                filename: pending.filename,
                title: f["title"].as_str().map(str::to_owned),
                channel: c.clone(),
                thread_ts: thread_ts.clone(),
                initial_comment: comment.clone(),
                bytes,
            });
        }
    }
    Ok(json!({"files": done}))
}
