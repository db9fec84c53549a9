//! The HTTP/WebSocket server (axum): `/healthz`, `/metrics`, the JSON API, the web chat
//! page at `/` and its socket at `/ws`, the control page at `/control`. Every route is a row of [`ROUTES`] with its
//! [`Access`]; the doors (`auth.rs`: Origin, Host, bearer token) guard all but `/healthz`,
//! and the tower layers of `layers.rs` (`gateway.http`) shed load and time requests out;
//! `listen.rs` accepts the connections and closes those left idle.
//!
//! Architecture invariant: only `server` knows HTTP and the API's JSON wire shapes.

mod answers;
mod api;
mod auth;
mod error;
mod event_json;
mod events;
mod history;
mod layers;
mod listen;
mod mcp_cron;
mod message_body;
mod metrics;
mod pages;
mod routes;
mod status;
mod telegram;
pub mod token_file;
pub mod views;
mod visibility;
pub mod webchat_files;
mod ws;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use switchboard_channels::webchat::WebChat;
use tokio_util::sync::CancellationToken;

use crate::runtime::Runtime;

pub use auth::{Doors, Refusal};
pub use layers::{Deadline, HttpLimits};
pub use listen::{serve, ConnLimits};
pub use routes::{Access, Route, Verb, ROUTES};

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
    /// This process's id as the holder of the `gateway` lease (PostgreSQL); `None` on
    /// SQLite, which takes no lease.
    pub lease_owner: Option<Arc<str>>,
}

/// The router: one route per row of [`ROUTES`], each behind the doors its access needs,
/// inside the middleware of `limits` (`layers.rs`): shed when the server is full (all but
/// `/healthz`), timed out past its deadline.
pub fn router(state: AppState, limits: &HttpLimits) -> Router {
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
        let handler = limits.apply(handler, route.deadline(), route.access != Access::Open);
        router = router.route(route.path, handler);
    }
    router
        .fallback(error::not_found)
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        .with_state(state)
}
