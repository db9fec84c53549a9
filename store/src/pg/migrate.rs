//! Applies `migrations/postgres/` to a database, serialized across processes by a
//! PostgreSQL advisory lock: two gateways starting together on one empty database both
//! succeed and the schema is applied once (the second finds it applied).

use sqlx::{Connection as _, PgConnection};

use crate::Result;

/// The PostgreSQL migrations, embedded at build time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// The advisory lock key every Switchboard migrator holds while it checks and applies
/// migrations (the bytes of `"sb-migr"` and a version byte). Session-level: the server drops
/// it when the connection ends, so a process killed mid-migration cannot leave it held.
/// (sqlx's migrator also takes its own per-database advisory lock, inside this one.)
pub const MIGRATE_LOCK_KEY: i64 = 0x7362_2d6d_6967_7201;

/// What one call of [`migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// Versions this call applied, in order; empty when the schema was already current.
    pub applied: Vec<i64>,
}

/// Connect to `url` and apply the migrations (see [`migrate`]). The connection is closed
/// afterwards, which also releases the lock if anything went wrong.
pub async fn migrate_url(url: &str) -> Result<Migrated> {
    let mut conn = PgConnection::connect(url).await?;
    let migrated = migrate(&mut conn).await;
    // Closing politely is best effort: the result of the migration is what matters.
    let _ = conn.close().await;
    migrated
}

/// Apply every migration the database lacks, holding [`MIGRATE_LOCK_KEY`] from before it
/// reads what is applied until after the last one is committed. A caller that waits for the
/// lock finds the schema current and applies nothing. Each migration runs in its own
/// transaction; a failed one leaves the versions before it applied and is reported.
pub async fn migrate(conn: &mut PgConnection) -> Result<Migrated> {
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(MIGRATE_LOCK_KEY)
        .execute(&mut *conn)
        .await?;
    let outcome = migrate_locked(conn).await;
    let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(MIGRATE_LOCK_KEY)
        .execute(&mut *conn)
        .await;
    let migrated = outcome?;
    unlocked?;
    Ok(migrated)
}

/// The versions applied so far, then the missing ones applied (the lock is held).
async fn migrate_locked(conn: &mut PgConnection) -> Result<Migrated> {
    let before = applied_versions(conn).await?;
    MIGRATOR.run_direct(&mut *conn).await?;
    let after = applied_versions(conn).await?;
    let applied = after.into_iter().filter(|v| !before.contains(v)).collect();
    Ok(Migrated { applied })
}

/// Versions recorded as applied in sqlx's bookkeeping table (none before the first run).
async fn applied_versions(conn: &mut PgConnection) -> Result<Vec<i64>> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(&mut *conn)
        .await?;
    if !exists {
        return Ok(Vec::new());
    }
    Ok(
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(&mut *conn)
            .await?,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
