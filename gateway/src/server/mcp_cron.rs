//! API of MCP servers and scheduled jobs: `GET /api/mcp` (every configured server with
//! its state, tools and restarts), `GET /api/cron`, `POST /api/cron` (add a job),
//! `POST /api/cron/{id}/run`, `POST /api/cron/{id}/remove`, `POST /api/cron/{id}/enable`
//! and `/disable` (what `switchboard cron` talks to while the daemon runs).

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::answers::{CronList, CronRemoved, CronStarted, McpList, McpServerView};
use super::error::{ApiError, Json};
use super::views::CronJobView;
use super::AppState;
use crate::config::CronJobConfig;
use crate::cron::fire::{fire, Fired};
use crate::cron::jobs::{self, JobError};
use crate::store::JobSource;

/// Largest job body accepted, in bytes.
const MAX_BODY: usize = 64 * 1024;

pub async fn list_mcp(State(state): State<AppState>) -> Json<McpList> {
    let (running, disabled) = state.rt.parts.get::<crate::mcp::McpHub>().status();
    let mut servers: Vec<McpServerView> = running
        .into_iter()
        .map(|s| McpServerView::Running {
            name: s.name,
            transport: s.transport,
            state: s.state.as_str(),
            tools: s.tools,
            restarts: s.restarts,
            // An MCP server's error may quote its URL or headers.
            last_error: s
                .last_error
                .as_deref()
                .map(|e| crate::secrets::scrub(e).into_owned()),
            pid: s.pid,
        })
        .collect();
    servers.extend(disabled.into_iter().map(|n| McpServerView::Disabled {
        name: n,
        state: "disabled",
        tools: [],
        restarts: 0,
    }));
    Json(McpList { servers })
}

impl From<JobError> for ApiError {
    fn from(e: JobError) -> Self {
        let status = match &e {
            JobError::Invalid(_) => StatusCode::BAD_REQUEST,
            JobError::NotFound(_) => StatusCode::NOT_FOUND,
            JobError::Exists(_) | JobError::FromConfig(_) => StatusCode::CONFLICT,
            JobError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

pub async fn list_cron(State(state): State<AppState>) -> Result<Json<CronList>, ApiError> {
    let jobs: Vec<CronJobView> = state
        .rt
        .store
        .cron_jobs()
        .await?
        .iter()
        .map(CronJobView::from)
        .collect();
    Ok(Json(CronList { jobs }))
}

/// Add a job: the body is a job as written in `cron.jobs[]`.
pub async fn add_cron(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<(StatusCode, Json<CronJobView>), ApiError> {
    if body.len() > MAX_BODY {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a job is at most {MAX_BODY} bytes"),
        ));
    }
    let job: CronJobConfig = serde_json::from_slice(&body)
        .map_err(|e| ApiError::bad_request(format!("bad job: {e}")))?;
    let cfg = state.rt.config();
    let row = jobs::add(&state.rt.store, &cfg, &job, JobSource::Cli).await?;
    state.rt.tasks.cron_wake.notify_one();
    Ok((StatusCode::CREATED, Json(CronJobView::from(&row))))
}

pub async fn run_cron(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<CronStarted>, ApiError> {
    let row = jobs::found(&state.rt.store, &id).await?;
    match fire(&state.rt, &row, true).await? {
        Fired::Queued { session_key, .. } => Ok(Json(CronStarted {
            id,
            status: "started",
            session_key,
        })),
        Fired::Skipped => Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("the job `{id}` is still running"),
        )),
    }
}

pub async fn remove_cron(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<CronRemoved>, ApiError> {
    let row = jobs::remove(&state.rt.store, &id).await?;
    state.rt.tasks.cron_wake.notify_one();
    Ok(Json(CronRemoved {
        id: row.id,
        status: "removed",
    }))
}

pub async fn enable_cron(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<CronJobView>, ApiError> {
    switch(state, id, true).await
}

pub async fn disable_cron(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<CronJobView>, ApiError> {
    switch(state, id, false).await
}

async fn switch(state: AppState, id: String, on: bool) -> Result<Json<CronJobView>, ApiError> {
    let row = jobs::set_enabled(&state.rt.store, &id, on).await?;
    state.rt.tasks.cron_wake.notify_one();
    Ok(Json(CronJobView::from(&row)))
}
