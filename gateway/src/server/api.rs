//! JSON API handlers: sessions, transcripts, posting a message, runs.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde::Deserialize;
use switchboard_channels::{ChatKind, Origin};

use super::answers::{MessageAnswer, SessionList, StoppedRun, StoppedTree, SubagentList};
use super::error::{push_line, ApiError, Json};
use super::layers::MAX_WAIT;
use super::message_body;
use super::views::{CompactionView, MessageView, RunView, SessionView, SubagentView};
use super::AppState;
use crate::agent::dispatch;
use crate::outbox::API_CHANNEL;
use crate::routing;
use crate::runtime::run_ends::RunWait;

/// Longest session key accepted in a path, in bytes.
const MAX_KEY: usize = 512;
/// Default wait for `wait: true` (the largest is `layers::MAX_WAIT`).
const DEFAULT_WAIT: Duration = Duration::from_secs(120);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListQuery {
    #[serde(default)]
    archived: bool,
    limit: Option<i64>,
}

pub async fn list_sessions(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<SessionList>, ApiError> {
    let rows = state
        .rt
        .store
        .list_sessions(q.archived, q.limit.unwrap_or(100).clamp(1, 1000))
        .await?;
    let running = crate::cluster::running::by_session(&state.rt).await?;
    let sessions: Vec<SessionView> = rows
        .iter()
        .map(|s| SessionView::new(s, running.get(&s.key).cloned()))
        .collect();
    Ok(Json(SessionList { sessions }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptQuery {
    /// A specific (possibly archived) session id; default: the newest session of the key.
    session_id: Option<String>,
    /// Also list the session's compactions, each after the last message it stands for
    /// (`{"role":"compaction",…}`, docs/context.md).
    #[serde(default)]
    compactions: bool,
}

/// The transcript as JSON Lines, one message per line.
pub async fn transcript(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Query(q): Query<TranscriptQuery>,
) -> Result<impl IntoResponse, ApiError> {
    let session = match q.session_id {
        Some(id) => state
            .rt
            .store
            .session_by_id(&id)
            .await?
            .filter(|s| s.key == key),
        None => state.rt.store.latest_session(&key).await?,
    };
    let Some(session) = session else {
        return Err(ApiError::not_found(format!("no session with key `{key}`")));
    };
    let rows = state.rt.store.transcript(&session.id).await?;
    let compactions = if q.compactions {
        state.rt.store.compactions(&session.id).await?
    } else {
        Vec::new()
    };
    let mut next = compactions.iter().peekable();
    let mut out = String::new();
    for m in &rows {
        push_line(&mut out, &MessageView::from(m))?;
        while let Some(c) = next.next_if(|c| c.through_seq <= m.seq) {
            push_line(&mut out, &CompactionView::from(c))?;
        }
    }
    for c in next {
        push_line(&mut out, &CompactionView::from(c))?;
    }
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], out))
}

pub async fn post_message(
    State(state): State<AppState>,
    Path(key): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<impl IntoResponse, ApiError> {
    if !is_json(&headers) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "expected `Content-Type: application/json`",
        ));
    }
    let body = body.map_err(|r| ApiError::new(r.status(), r.body_text()))?;
    let body = message_body::parse(&body).map_err(|e| ApiError::new(e.status(), e.to_string()))?;
    if key.len() > MAX_KEY || key.chars().any(char::is_control) {
        return Err(ApiError::bad_request(format!(
            "session key must be at most {MAX_KEY} bytes, without control characters"
        )));
    }
    let agent_id = agent_of_key(&key).ok_or_else(|| {
        ApiError::bad_request(
            "session key must look like agent:<agentId>:<rest> (e.g. agent:main:main)",
        )
    })?;
    let cfg = state.rt.config();
    if routing::agent_entry(&cfg, &agent_id).is_none()
        && agent_id != routing::default_agent_id(&cfg)
    {
        return Err(ApiError::bad_request(format!("unknown agent `{agent_id}`")));
    }
    let origin = Origin {
        channel: API_CHANNEL.into(),
        account: None,
        chat_id: key.clone(),
        thread_id: None,
        kind: ChatKind::Direct,
        reply_handle: None,
    };
    // Subscribe before submitting so the run's end cannot be missed.
    let mut run_ends = state.rt.events.run_ends.subscribe(&key);
    let submission = dispatch::Submission {
        session_key: &key,
        agent_id: &agent_id,
        origin: &origin,
        sender_id: "api",
        text: &body.text,
    };
    let sub = dispatch::submit_message(&state.rt, &submission).await?;
    if !body.wait {
        return Ok((
            StatusCode::ACCEPTED,
            Json(MessageAnswer::waiting("accepted", &sub)),
        ));
    }
    let limit = body.timeout.unwrap_or(DEFAULT_WAIT).min(MAX_WAIT);
    match run_ends.wait_for_claiming_run(sub.inbox_id, limit).await {
        RunWait::Ended(end) => Ok((
            StatusCode::OK,
            Json(MessageAnswer::ended(sub.inbox_id, &end)),
        )),
        RunWait::Closed => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the gateway is shutting down",
        )),
        RunWait::TimedOut => Ok((
            StatusCode::ACCEPTED,
            Json(MessageAnswer::waiting("pending", &sub)),
        )),
    }
}

pub async fn get_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    let run = state
        .rt
        .store
        .get_run(&id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no run `{id}`")))?;
    Ok(Json(RunView::from(run)))
}

/// `application/json` or `application/<something>+json`, parameters ignored.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(mime) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
    else {
        return false;
    };
    let mime = mime.trim().to_ascii_lowercase();
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// `agent:<id>:…` → `<id>`.
fn agent_of_key(key: &str) -> Option<String> {
    crate::session_key::SessionKey::parse(key)
        .ok()
        .map(|k| k.agent().to_string())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentsQuery {
    /// Only children of this requester session key.
    requester: Option<String>,
    limit: Option<i64>,
}

pub async fn list_subagents(
    State(state): State<AppState>,
    Query(q): Query<SubagentsQuery>,
) -> Result<Json<SubagentList>, ApiError> {
    let limit = q.limit.unwrap_or(100).clamp(1, 10_000);
    let rows = match q.requester {
        Some(r) => state.rt.store.subagents_of(&r, limit).await?,
        None => state.rt.store.all_subagents(limit).await?,
    };
    let subagents: Vec<SubagentView> = rows.into_iter().map(SubagentView::from).collect();
    Ok(Json(SubagentList { subagents }))
}

pub async fn get_subagent(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SubagentView>, ApiError> {
    let row = state
        .rt
        .store
        .subagent(&id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no sub-agent run `{id}`")))?;
    Ok(Json(SubagentView::from(row)))
}

pub async fn stop_subagent(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<StoppedRun>, ApiError> {
    let row = state
        .rt
        .store
        .subagent(&id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no sub-agent run `{id}`")))?;
    let stopped =
        crate::subagents::control::stop_child(&state.rt, &row, "stopped through the API").await?;
    Ok(Json(StoppedRun {
        run_id: id,
        stopped,
    }))
}

/// Stops the whole tree under a requester session: its children and theirs.
pub async fn stop_tree(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Result<Json<StoppedTree>, ApiError> {
    let stopped =
        crate::subagents::control::stop_tree(&state.rt, &key, "stopped through the API").await?;
    Ok(Json(StoppedTree {
        session_key: key,
        stopped,
    }))
}
