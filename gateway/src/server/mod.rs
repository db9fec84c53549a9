//! The HTTP/WebSocket server (axum): `/healthz`, `/metrics`, the JSON API, the web chat
//! page at `/` and its socket at `/ws`. Every route is a row of [`ROUTES`] with its
//! [`Access`]; the doors (`auth.rs`: Origin, Host, bearer token) guard all but `/healthz`.
//!
//! Architecture invariant: only `server` knows HTTP and the API's JSON wire shapes.

mod api;
mod auth;
mod error;
mod events;
mod mcp_cron;
mod message_body;
mod metrics;
pub mod origin;
mod routes;
mod telegram;
mod visibility;
mod ws;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use switchboard_channels::webchat::WebChat;
use tokio_util::sync::CancellationToken;

use crate::runtime::Runtime;

pub use auth::{Doors, Refusal};
pub use routes::{Access, Route, Verb, ROUTES};

const WEBCHAT_PAGE: &str = include_str!("webchat.html");

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub rt: Arc<Runtime>,
    pub webchat: Arc<WebChat>,
    /// Origin, Host and token rules (fixed at start).
    pub doors: Arc<Doors>,
    pub started: Instant,
    /// Fired at shutdown once the outbox is flushed; open sockets close on it.
    pub closing: CancellationToken,
    /// Channel adapters (the Telegram webhook route needs the running adapter).
    pub adapters: Arc<crate::adapters::Adapters>,
}

/// The router: one route per row of [`ROUTES`], each behind the doors its access needs.
pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    let mut router = Router::new();
    for route in ROUTES {
        let handler = route.handler();
        let handler = match route.access {
            Access::Open => handler,
            access => handler.route_layer(axum::middleware::from_fn_with_state(
                auth::Guard {
                    doors: state.doors.clone(),
                    access,
                },
                auth::guard,
            )),
        };
        router = router.route(route.path, handler);
    }
    router
        .fallback(error::not_found)
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(state)
}
