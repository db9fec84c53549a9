//! The store on PostgreSQL: an sqlx pool (rustls), the schema's migrations applied under a
//! lock before the pool opens (`migrate`), and the store's methods by area, with `$n`
//! placeholders; a turn's scripts (accept, start, a run's end) are server-side functions
//! called in one round trip (migration 0004), the rarer ones transactions of single
//! statements whose row counts are checked in Rust where SQLite gates a statement on
//! `changes()`, with row locks (or an advisory lock) where a transaction reads before it
//! writes (docs/postgres.md).
//!
//! No transcript cache here: with several writers a `BIGSERIAL` does not follow commit
//! order, so "the rows past the cached `seq`" is not "what the cache lacks".

mod announces;
mod approvals;
mod channels;
mod cron;
pub mod health;
mod inbox;
mod interrupts;
mod leases;
mod ledger;
mod messages;
pub mod migrate;
mod notify;
mod outbox;
mod progress;
mod runs;
mod sessions;
mod starts;
mod subagents;
mod worktrees;

use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::Connection as _;

use super::Result;

pub use notify::{Listener, Notification};

/// The engine's name in errors and status.
pub(super) const ENGINE: &str = "PostgreSQL";

/// Most connections the pool opens (a turn's writes each hold one for a transaction).
const MAX_CONNECTIONS: u32 = 16;

/// How long a caller waits for a free connection before the store fails with an error.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// A pooled connection idle at least this long is checked (a ping, one round trip) before
/// it is handed out; one used more recently is handed out as it is. sqlx pings at every
/// acquire by default, a round trip before each of a turn's calls: on a busy pool the
/// connection was just used, and a server that went away since is reported by the call
/// itself, as it would be had it gone right after the ping.
const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// The PostgreSQL engine. Cheap to clone (the pool is shared).
#[derive(Clone)]
pub(super) struct Pg {
    pool: PgPool,
}

impl Pg {
    /// Apply the migrations (under the migrator's advisory lock), then open the pool.
    pub(super) async fn open(url: &str) -> Result<Pg> {
        migrate::migrate_url(url).await?;
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for < PING_AFTER_IDLE {
                        return Ok(true);
                    }
                    // A failed ping: the pool closes this connection and tries another.
                    Ok(conn.ping().await.is_ok())
                })
            })
            .connect(url)
            .await?;
        Ok(Pg { pool })
    }

    /// Close the pool's connections (PostgreSQL has nothing to flush).
    pub(super) async fn close(&self) {
        self.pool.close().await;
    }

    /// Run one SQL statement (tests).
    #[cfg(test)]
    pub(super) async fn execute_for_tests(&self, sql: &str) -> Result<()> {
        sqlx::query(sql).execute(&self.pool).await?;
        Ok(())
    }

    /// The `i64` one SQL query answers (tests).
    #[cfg(test)]
    pub(super) async fn count_for_tests(&self, sql: &str) -> Result<i64> {
        Ok(sqlx::query_scalar(sql).fetch_one(&self.pool).await?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
