//! What `switchboard doctor` asks of a PostgreSQL database, without changing it: whether it
//! answers, which of this binary's migrations it has (applied, failed part-way, still to
//! come, or from a newer gateway), who holds the leases, and who is paired. One connection,
//! a read-only session, a bounded wait for each step: safe next to running gateways, and
//! never migrated or created.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection, PgRow};
use sqlx::{ConnectOptions, Connection, Row};

use super::leases::row_to_lease;
use super::migrate::MIGRATOR;
use crate::{Lease, Result, StoreError};

/// Longest wait to connect, and the server-side limit of each statement.
const WAIT: Duration = Duration::from_secs(5);

/// The findings of [`inspect`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgHealth {
    /// `SHOW server_version`.
    pub server_version: String,
    /// Versions applied in full.
    pub applied: Vec<i64>,
    /// Versions whose migration failed part-way: the gateway will not start until it is
    /// mended by hand.
    pub failed: Vec<i64>,
    /// This binary's versions the database lacks: applied at the next start.
    pub pending: Vec<i64>,
    /// Applied versions this binary does not have: a newer gateway migrated the database,
    /// and this one refuses to start on it.
    pub unknown: Vec<i64>,
    /// Every lease, held or expired.
    pub leases: Vec<Lease>,
    /// The database's clock (unix ms), which lease expiries are on (0 before the schema
    /// exists: there are no leases then).
    pub now_ms: i64,
    /// Approved pairings as (channel, sender id).
    pub approved: Vec<(String, String)>,
}

impl PgHealth {
    /// The leases held now (not expired).
    pub fn held(&self) -> impl Iterator<Item = &Lease> {
        self.leases.iter().filter(|l| l.expires_at > self.now_ms)
    }
}

/// Connect to `url` in a read-only session and read what [`PgHealth`] holds.
pub async fn inspect(url: &str) -> Result<PgHealth> {
    let opts = PgConnectOptions::from_str(url)?.options([
        ("default_transaction_read_only", "on"),
        ("statement_timeout", "5000"),
    ]);
    let mut conn = tokio::time::timeout(WAIT, opts.connect())
        .await
        .map_err(|_| {
            StoreError::Db(sqlx::Error::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", WAIT.as_secs()),
            )))
        })??;
    let health = read(&mut conn).await;
    // Closing politely is best effort: what was read is the answer.
    let _ = conn.close().await;
    health
}

async fn read(conn: &mut PgConnection) -> Result<PgHealth> {
    let server_version: String = sqlx::query_scalar("SHOW server_version")
        .fetch_one(&mut *conn)
        .await?;
    let migrated: Option<String> =
        sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations')::text")
            .fetch_one(&mut *conn)
            .await?;
    let rows = match migrated {
        Some(_) => {
            sqlx::query("SELECT version, success FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&mut *conn)
                .await?
        }
        None => Vec::new(),
    };
    let mut applied = Vec::new();
    let mut failed = Vec::new();
    for row in &rows {
        let version: i64 = row.try_get("version")?;
        if row.try_get::<bool, _>("success")? {
            applied.push(version);
        } else {
            failed.push(version);
        }
    }
    let known: Vec<i64> = MIGRATOR.iter().map(|m| m.version).collect();
    let pending = known
        .iter()
        .copied()
        .filter(|v| !applied.contains(v) && !failed.contains(v))
        .collect();
    let unknown = applied
        .iter()
        .chain(&failed)
        .copied()
        .filter(|v| !known.contains(v))
        .collect();
    // Before the schema exists there are no leases (so no clock to read them by) and no
    // pairings.
    let (leases, now_ms, approved) = if applied.is_empty() {
        (Vec::new(), 0, Vec::new())
    } else {
        let leases = sqlx::query(
            "SELECT name, owner, fence, acquired_at, renewed_at, expires_at FROM leases
             ORDER BY name",
        )
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(row_to_lease)
        .collect::<Result<Vec<_>>>()?;
        let now: i64 = sqlx::query_scalar("SELECT switchboard_now_ms()")
            .fetch_one(&mut *conn)
            .await?;
        let approved = sqlx::query(
            "SELECT channel, sender_id FROM pairings WHERE status = 'approved'
             ORDER BY channel, sender_id",
        )
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(pairing)
        .collect::<Result<Vec<_>>>()?;
        (leases, now, approved)
    };
    Ok(PgHealth {
        server_version,
        applied,
        failed,
        pending,
        unknown,
        leases,
        now_ms,
        approved,
    })
}

fn pairing(r: &PgRow) -> Result<(String, String)> {
    Ok((r.try_get("channel")?, r.try_get("sender_id")?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use sqlx::Connection;
    use switchboard_testkit::pg::TestDb;

    use super::inspect;
    use crate::{Pairing, Store, GATEWAY_LEASE};

    /// Catches: doctor migrating or creating what it inspects, a fresh database taken for
    /// a broken one, a failed or a newer migration passed over, a lease or a pairing not
    /// seen.
    #[tokio::test]
    async fn reads_the_schema_the_leases_and_the_pairings_without_writing() {
        let db = TestDb::create().await.unwrap();
        let fresh = inspect(db.url()).await.unwrap();
        assert!(fresh.applied.is_empty() && fresh.failed.is_empty());
        assert_eq!(fresh.pending.len(), super::MIGRATOR.iter().count());
        assert!(fresh.leases.is_empty());
        // Inspecting created nothing: the schema is still absent.
        assert!(inspect(db.url()).await.unwrap().applied.is_empty());

        let store = Store::connect(db.url()).await.unwrap();
        store
            .acquire_lease(GATEWAY_LEASE, "proc-a", Duration::from_secs(30))
            .await
            .unwrap()
            .unwrap();
        let Pairing::Pending { code, .. } =
            store.pairing_for("telegram", "42", None).await.unwrap()
        else {
            panic!("pending")
        };
        store.approve_pairing("telegram", &code).await.unwrap();
        let h = inspect(db.url()).await.unwrap();
        assert_eq!(h.applied.len(), super::MIGRATOR.iter().count());
        assert!(h.pending.is_empty() && h.failed.is_empty() && h.unknown.is_empty());
        let held: Vec<_> = h.held().map(|l| l.owner.as_str()).collect();
        assert_eq!(held, ["proc-a"]);
        assert_eq!(h.approved, [("telegram".to_string(), "42".to_string())]);
        assert!(!h.server_version.is_empty());

        // A migration that failed part-way, and one from a newer gateway.
        sqlx::query("UPDATE _sqlx_migrations SET success = false WHERE version = 1")
            .execute(&mut sqlx::PgConnection::connect(db.url()).await.unwrap())
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             VALUES (9999, 'from a newer gateway', true, '\\x00', 0)",
        )
        .execute(&mut sqlx::PgConnection::connect(db.url()).await.unwrap())
        .await
        .unwrap();
        let h = inspect(db.url()).await.unwrap();
        assert_eq!(h.failed, [1]);
        assert_eq!(h.unknown, [9999]);
        store.close().await;
    }

    /// Catches: doctor hanging on a server that does not answer.
    #[tokio::test]
    async fn a_closed_port_is_an_error() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let url = format!("postgres://sb:secret@127.0.0.1:{port}/sb");
        assert!(inspect(&url).await.is_err());
    }
}
