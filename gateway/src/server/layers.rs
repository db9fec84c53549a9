//! The server's middleware, from tower layers, as `gateway.http` and `gateway.maxBodyBytes`
//! set it: a concurrency limit that sheds load (503 with `Retry-After` at once, never a
//! queue), a request timeout per route (408), and the body limit (axum's, so a body past
//! it is refused with the JSON error the handlers give).
//!
//! The timeout runs from a request's arrival to its answer. Two kinds of routes differ:
//! a message post may wait for its run (`wait: true`, at most [`MAX_WAIT`]), so its
//! deadline is the timeout plus that wait, never cut short of the bound its caller chose
//! (and only a caller past the doors, which are checked on the headers before the body is
//! read, gets that long); a WebSocket route's timeout covers its upgrade answer, and the
//! socket lives on after it. `/healthz` is never shed: a probe must not see a busy daemon
//! as a dead one.

use std::sync::Arc;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use tokio::sync::Semaphore;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::load_shed::error::Overloaded;
use tower::timeout::error::Elapsed;
use tower::{BoxError, ServiceBuilder};

use super::error::ApiError;
use super::AppState;
use crate::config::GatewayConfig;

/// The longest a `wait: true` message post may ask to wait for its run.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(600);
/// What a shed request is told to wait before trying again, in seconds.
const RETRY_AFTER_SECS: &str = "1";

/// The limits of the HTTP server, fixed at start (`gateway.*` needs a restart).
#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// Requests served at once (`gateway.http.maxConcurrent`), shared by every route.
    slots: Arc<Semaphore>,
    /// `gateway.http.timeout`.
    timeout: Duration,
    /// `gateway.maxBodyBytes`.
    pub(super) max_body_bytes: usize,
}

/// How long a route's request may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// `gateway.http.timeout`.
    Request,
    /// `gateway.http.timeout` plus [`MAX_WAIT`]: the message post, which may wait.
    Wait,
}

impl HttpLimits {
    pub fn from_config(g: &GatewayConfig) -> HttpLimits {
        HttpLimits {
            slots: Arc::new(Semaphore::new(g.http.max_concurrent)),
            timeout: g.http.timeout,
            max_body_bytes: g.max_body_bytes,
        }
    }

    fn deadline(&self, deadline: Deadline) -> Duration {
        match deadline {
            Deadline::Request => self.timeout,
            Deadline::Wait => self.timeout.saturating_add(MAX_WAIT),
        }
    }

    /// `handler` with its timeout and, when `shed`, a slot of the shared limit (refused at
    /// once when none is free). The timeout runs inside the slot: a request holds its slot
    /// until it is answered or timed out.
    pub(super) fn apply(
        &self,
        handler: MethodRouter<AppState>,
        deadline: Deadline,
        shed: bool,
    ) -> MethodRouter<AppState> {
        let timeout = self.deadline(deadline);
        if shed {
            handler.route_layer(
                ServiceBuilder::new()
                    .layer(HandleErrorLayer::new(move |e| refused(e, timeout)))
                    .load_shed()
                    .layer(GlobalConcurrencyLimitLayer::with_semaphore(
                        self.slots.clone(),
                    ))
                    .timeout(timeout),
            )
        } else {
            handler.route_layer(
                ServiceBuilder::new()
                    .layer(HandleErrorLayer::new(move |e| refused(e, timeout)))
                    .timeout(timeout),
            )
        }
    }
}

/// The answer to a request the middleware stopped.
async fn refused(e: BoxError, timeout: Duration) -> Response {
    if e.is::<Overloaded>() {
        let mut r = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the gateway is serving as many requests as it may (gateway.http.maxConcurrent); try again shortly",
        )
        .into_response();
        r.headers_mut().insert(
            header::RETRY_AFTER,
            header::HeaderValue::from_static(RETRY_AFTER_SECS),
        );
        r
    } else if e.is::<Elapsed>() {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request was not answered within {} (gateway.http.timeout)",
                humantime::format_duration(timeout)
            ),
        )
        .into_response()
    } else {
        tracing::error!(error = %e, "HTTP middleware failed");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
    }
}
