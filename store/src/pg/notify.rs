//! PostgreSQL's `LISTEN`/`NOTIFY`, for shared mode's bus (the gateway's `cluster::bus`): sending
//! notifications through the pool ([`Pg::notify`]) and a [`Listener`] on a connection of
//! its own, outside the pool's 16, that reconnects by itself when the connection drops.
//!
//! Notifications are not stored: what is sent while a listener is disconnected is lost to
//! it. The listener says so in the log at each reconnection, and counts them
//! ([`Listener::reconnects`]).

use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use switchboard_channels::backoff::Backoff;

use super::Pg;
use crate::Result;

/// One notification as the listener received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub channel: String,
    pub payload: String,
}

impl Pg {
    /// `NOTIFY channel, payload` for each payload, in order, in one statement (one round
    /// trip, one transaction: the listeners get them in this order). PostgreSQL refuses a
    /// payload of 8000 bytes or more; callers bound theirs (`cluster::wire`).
    pub(crate) async fn notify(&self, channel: &str, payloads: &[String]) -> Result<()> {
        if payloads.is_empty() {
            return Ok(());
        }
        sqlx::query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p")
            .bind(channel)
            .bind(payloads)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// A listener on `channels`, on a connection of its own (the pool's options: same
    /// server, same TLS, same credentials). Connects at once: an error says the server is
    /// unreachable now (the caller retries).
    pub(crate) async fn listener(&self, channels: &[&str], backoff: Backoff) -> Result<Listener> {
        let options = (*self.pool.connect_options()).clone();
        let mut listener = Listener {
            options,
            channels: channels.iter().map(|c| c.to_string()).collect(),
            backoff,
            inner: None,
            backend_pid: None,
            reconnects: 0,
        };
        listener.connect().await?;
        Ok(listener)
    }
}

/// `LISTEN` on a dedicated connection. [`Listener::recv`] waits for the next notification
/// and, when the connection drops (a restart of the server, a network cut, an operator's
/// `pg_terminate_backend`), logs it and reconnects with backoff, then listens again.
pub struct Listener {
    options: PgConnectOptions,
    channels: Vec<String>,
    backoff: Backoff,
    inner: Option<PgListener>,
    backend_pid: Option<i32>,
    reconnects: u64,
}

impl Listener {
    /// A fresh connection (a one-connection pool of its own, so a dropped connection is
    /// never handed back to anyone), `LISTEN` on every channel, and its backend's pid.
    async fn connect(&mut self) -> Result<()> {
        self.inner = None;
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_with(self.options.clone())
            .await?;
        let mut listener = PgListener::connect_with(&pool).await?;
        // A lost connection is reported to `recv` (`Ok(None)`), which reconnects itself.
        listener.eager_reconnect(false);
        let channels: Vec<&str> = self.channels.iter().map(String::as_str).collect();
        listener.listen_all(channels).await?;
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut listener)
            .await?;
        self.backend_pid = Some(pid);
        self.inner = Some(listener);
        Ok(())
    }

    /// The next notification on any of the channels. Never fails: a dropped connection is
    /// reconnected (logged once per loss, then at each failed attempt, with backoff);
    /// what was sent meanwhile is lost. Cancel-safe (drop the future to stop).
    pub async fn recv(&mut self) -> Notification {
        loop {
            if let Some(listener) = self.inner.as_mut() {
                match listener.try_recv().await {
                    Ok(Some(n)) => {
                        return Notification {
                            channel: n.channel().to_string(),
                            payload: n.payload().to_string(),
                        }
                    }
                    Ok(None) => {
                        tracing::warn!(pid = ?self.backend_pid, "bus: the LISTEN connection was lost; reconnecting (notifications sent meanwhile are lost)");
                    }
                    Err(e) => {
                        tracing::warn!(pid = ?self.backend_pid, error = %e, "bus: the LISTEN connection failed; reconnecting (notifications sent meanwhile are lost)");
                    }
                }
                self.inner = None;
            }
            self.reconnect().await;
        }
    }

    /// Connect again, waiting with backoff between failed attempts, until it works.
    async fn reconnect(&mut self) {
        let mut failures = 0u32;
        loop {
            match self.connect().await {
                Ok(()) => {
                    self.reconnects += 1;
                    tracing::info!(pid = ?self.backend_pid, attempts = failures + 1, "bus: listening again");
                    return;
                }
                Err(e) => {
                    failures = failures.saturating_add(1);
                    let wait = self.backoff.delay(failures);
                    tracing::warn!(error = %e, retry_in = ?wait, "bus: cannot reconnect the LISTEN connection");
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// The server process of the current connection (`pg_backend_pid()`), if connected.
    pub fn backend_pid(&self) -> Option<i32> {
        self.backend_pid
    }

    /// How many times the connection was lost and made again.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "notify_tests.rs"]
mod tests;
