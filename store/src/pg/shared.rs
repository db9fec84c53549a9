//! Shared mode on PostgreSQL (docs/postgres.md, "Shared mode"): taking over the runs and
//! outbox rows of a process that died, once their leases have expired. Leasing itself
//! happens in the triggers of migration 0006, which read the owner id every connection of
//! a shared-mode process carries; here, the takeovers, and the error a start gets while
//! another process runs a run of its session.

use sqlx::Row;

use super::super::runs::decode_run;
use super::super::{Result, RunRow, StoreError};
use super::Pg;

/// The SQLSTATE the run trigger raises when a run's session runs on another process.
const SESSION_BUSY: &str = "SB001";

/// Most runs one takeover pass looks at (the rest wait for the next pass).
const TAKEOVER_BATCH: i64 = 200;

/// A start's error: [`StoreError::SessionBusy`] for the run trigger's refusal, the
/// database error otherwise.
pub(super) fn busy(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Database(d) if d.code().as_deref() == Some(SESSION_BUSY) => {
            StoreError::SessionBusy(d.message().to_owned())
        }
        _ => StoreError::Db(e),
    }
}

impl Pg {
    pub async fn take_over_runs(&self) -> Result<Vec<RunRow>> {
        let Some(member) = &self.member else {
            // Standby mode: this is the one process acting; every unfinished run is its.
            return self.unfinished_runs().await;
        };
        let candidates = sqlx::query(
            "SELECT id, status FROM runs
              WHERE status IN ('queued', 'running')
                AND (lease_owner IS NULL OR lease_expires_at < switchboard_now_ms())
              ORDER BY created_at, seq LIMIT $1",
        )
        .bind(TAKEOVER_BATCH)
        .fetch_all(&self.pool)
        .await?;
        let mut taken = Vec::new();
        for c in candidates {
            let id: String = c.try_get("id")?;
            let status: String = c.try_get("status")?;
            let mut tx = self.pool.begin().await?;
            if status == "running" {
                // It resumes without a start: only while no other run of its session runs
                // under a live lease (the session's row serializes this with starts).
                // (Two statements: the check's snapshot must be taken after the lock.)
                sqlx::query(
                    "SELECT 1 FROM sessions
                      WHERE key = (SELECT session_key FROM runs WHERE id = $1) FOR UPDATE",
                )
                .bind(&id)
                .execute(&mut *tx)
                .await?;
                let free: bool = sqlx::query_scalar(
                    "SELECT NOT EXISTS (
                         SELECT 1 FROM runs o, runs r
                          WHERE r.id = $1 AND o.session_key = r.session_key
                            AND o.id <> r.id AND o.status = 'running'
                            AND o.lease_expires_at >= switchboard_now_ms())",
                )
                .bind(&id)
                .fetch_one(&mut *tx)
                .await?;
                if !free {
                    continue;
                }
            }
            let row = sqlx::query(
                "UPDATE runs SET lease_owner = $2,
                        lease_expires_at = switchboard_now_ms() + $3
                  WHERE id = $1 AND status IN ('queued', 'running')
                    AND (lease_owner IS NULL OR lease_expires_at < switchboard_now_ms())
                 RETURNING *",
            )
            .bind(&id)
            .bind(&member.owner)
            .bind(super::super::leases::ttl_ms(member.ttl))
            .fetch_optional(&mut *tx)
            .await?;
            tx.commit().await?;
            if let Some(row) = row {
                taken.push(decode_run(&row)?);
            }
        }
        Ok(taken)
    }
}
