//! The HTTP server's accept loop: one task per connection, each owned by the loop and
//! closed gracefully when the daemon stops.
//!
//! It is axum's `serve` with two additions. A connection must send its next request's
//! headers within `gateway.http.idleTimeout` (`hyper`'s header-read timeout, which runs
//! from the moment the connection waits for a request: right after it opens and after each
//! answer). So a kept-alive connection nobody uses is closed after that long, and its
//! buffers are freed, instead of being held until the client goes away; and a client that
//! sends its headers a byte at a time cannot hold a connection past it. And at most
//! `gateway.http.maxConnections` are open at once: a flood of connections waits in the
//! OS's accept queue instead of costing a task and buffers each. A WebSocket leaves the
//! loop once upgraded and is neither timed nor counted by it (its own pings and the
//! `closing` token end it; it is opened with the token).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::config::HttpConfig;

/// How long to wait after an accept error (out of file descriptors, most likely) before
/// accepting again: the error would repeat at once otherwise, and connections that close
/// meanwhile give their descriptors back.
const ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// What `gateway.http` sets for connections, fixed at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// `gateway.http.idleTimeout`.
    pub idle: Duration,
    /// `gateway.http.maxConnections`.
    pub max: usize,
}

impl ConnLimits {
    pub fn from_config(http: &HttpConfig) -> ConnLimits {
        ConnLimits {
            idle: http.idle_timeout,
            max: http.max_connections,
        }
    }
}

/// Serve `app` on `listener` until `stop`; then stop accepting, ask every open connection
/// to finish its request in flight and close, and return once they have. With
/// `limits.max` connections open, the next waits in the OS's accept queue until one closes.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    stop: CancellationToken,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.idle);
    let slots = Arc::new(Semaphore::new(limits.max));
    let connections = TaskTracker::new();
    loop {
        let slot = tokio::select! {
            _ = stop.cancelled() => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_closed) => break,
            },
        };
        let stream = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A client that gave up before it was accepted: nothing to wait for.
                Err(e) if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
                ) => continue,
                Err(e) => {
                    tracing::warn!(error = %e, "HTTP server: cannot accept a connection; retrying in a second");
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    }
                }
            },
        };
        let served = connection(http.clone(), stream, app.clone(), stop.clone());
        connections.spawn(async move {
            served.await;
            drop(slot);
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// One connection, served until the client closes it, it stays idle past the timeout, or
/// `stop` (then its request in flight is answered first).
async fn connection(
    http: hyper::server::conn::http1::Builder,
    stream: TcpStream,
    app: Router,
    stop: CancellationToken,
) {
    // Answers are small and written at once; Nagle's delay would hold their last segment.
    let _ = stream.set_nodelay(true);
    let service = TowerToHyperService::new(
        app.map_request(|req: Request<Incoming>| req.map(axum::body::Body::new)),
    );
    let conn = http
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        _ = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        // A client that went away or timed out: ordinary, not worth more than a trace.
        tracing::trace!(error = %e, "HTTP connection ended");
    }
}
