//! The HTTP/WebSocket server (axum): `/healthz`, `/metrics`, the JSON API, the web chat
//! page at `/` and its socket at `/ws`. Bearer-token auth on everything but `/healthz`
//! and the static page.
//!
//! Architecture invariant: only `server` knows HTTP and the API's JSON wire shapes.

mod api;
mod auth;
mod error;
mod message_body;
mod metrics;
mod telegram;
mod visibility;
mod ws;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::DefaultBodyLimit;
use axum::response::Html;
use axum::routing::{get, post};
use axum::Router;
use switchboard_channels::webchat::WebChat;
use tokio_util::sync::CancellationToken;

use crate::runtime::Runtime;

const WEBCHAT_PAGE: &str = include_str!("webchat.html");

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub rt: Arc<Runtime>,
    pub webchat: Arc<WebChat>,
    pub token: Option<Arc<str>>,
    pub started: Instant,
    /// Fired when the server stops accepting; open sockets close on it.
    pub closing: CancellationToken,
    /// Channel adapters (the Telegram webhook route needs the running adapter).
    pub adapters: Arc<crate::adapters::Adapters>,
}

pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    let api = Router::new()
        .route("/metrics", get(metrics::metrics))
        .route("/api/sessions", get(api::list_sessions))
        .route("/api/sessions/{key}/transcript", get(api::transcript))
        .route("/api/sessions/{key}/messages", post(api::post_message))
        .route("/api/runs/{id}", get(api::get_run))
        .route("/api/subagents", get(api::list_subagents))
        .route("/api/subagents/{id}", get(api::get_subagent))
        .route("/api/subagents/{id}/stop", post(api::stop_subagent))
        .route("/ws", get(ws::upgrade))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ));
    Router::new()
        .route("/", get(|| async { Html(WEBCHAT_PAGE) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/telegram/webhook", post(telegram::webhook))
        .merge(api)
        .fallback(error::not_found)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}
