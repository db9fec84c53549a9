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
mod choices;
mod compactions;
mod cron;
pub mod health;
mod inbox;
mod interrupts;
mod leases;
mod ledger;
mod media_files;
mod messages;
pub mod migrate;
mod notify;
mod outbox;
mod progress;
mod runs;
mod sessions;
mod shared;
mod starts;
mod subagents;
mod usage;
mod worktrees;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
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
    /// Shared mode: this process's owner id, which every connection also carries (see
    /// [`Pg::open`]); `None` in standby mode.
    member: Option<Arc<RowLeases>>,
}

/// Who leases rows in shared mode, and for how long (`storage.leaseTimeout`).
#[derive(Debug, Clone)]
pub struct RowLeases {
    pub owner: String,
    pub ttl: Duration,
}

impl Pg {
    /// Apply the migrations (under the migrator's advisory lock), then open the pool. In
    /// shared mode (`member`), every connection starts with `switchboard.lease_owner` and
    /// `switchboard.lease_ms` set (startup parameters, no statement), which the triggers of
    /// migration 0006 read to lease runs and outbox rows to this process.
    pub(super) async fn open(url: &str, member: Option<RowLeases>) -> Result<Pg> {
        migrate::migrate_url(url).await?;
        let mut opts = PgConnectOptions::from_str(url)?;
        if let Some(m) = &member {
            let ttl = super::leases::ttl_ms(m.ttl).to_string();
            opts = opts.options([
                ("switchboard.lease_owner", m.owner.as_str()),
                ("switchboard.lease_ms", ttl.as_str()),
            ]);
        }
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
            .connect_with(opts)
            .await?;
        Ok(Pg {
            pool,
            member: member.map(Arc::new),
        })
    }

    /// Close the pool's connections (PostgreSQL has nothing to flush).
    pub(super) async fn close(&self) {
        self.pool.close().await;
    }

    /// Run one SQL statement (tests).
    #[cfg(any(test, feature = "test-hooks"))]
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod shared_tests;
