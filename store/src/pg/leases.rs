//! Named leases on PostgreSQL: the `leases` table of migration 0002, every time on the
//! database server's clock (`switchboard_now_ms()`), so clock skew between hosts cannot
//! give one lease to two processes. Taking a lease is one `INSERT … ON CONFLICT DO UPDATE
//! … WHERE`: the row lock it takes serializes two acquirers, and the second finds the row
//! the first wrote (held, not expired) and gets nothing. A fenced write (Telegram's offset)
//! holds the lease row `FOR SHARE` while it writes.

use std::time::Duration;

use sqlx::postgres::PgRow;
use sqlx::Row;

use super::super::leases::{ttl_ms, Lease};
use super::super::Result;
use super::Pg;

const COLUMNS: &str = "name, owner, fence, acquired_at, renewed_at, expires_at";

pub(super) fn row_to_lease(r: &PgRow) -> Result<Lease> {
    Ok(Lease {
        name: r.try_get("name")?,
        owner: r.try_get("owner")?,
        fence: r.try_get("fence")?,
        acquired_at: r.try_get("acquired_at")?,
        renewed_at: r.try_get("renewed_at")?,
        expires_at: r.try_get("expires_at")?,
    })
}

impl Pg {
    pub async fn acquire_lease(
        &self,
        name: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>> {
        let sql = format!(
            "INSERT INTO leases AS l (name, owner, fence, acquired_at, renewed_at, expires_at)
             SELECT $1, $2, 1, t.now, t.now, t.now + $3
               FROM (SELECT switchboard_now_ms() AS now) AS t
             ON CONFLICT (name) DO UPDATE SET
                 owner = excluded.owner,
                 fence = CASE WHEN l.owner = excluded.owner THEN l.fence ELSE l.fence + 1 END,
                 acquired_at = CASE WHEN l.owner = excluded.owner
                                    THEN l.acquired_at ELSE excluded.acquired_at END,
                 renewed_at = excluded.renewed_at,
                 expires_at = excluded.expires_at
             WHERE l.owner = excluded.owner OR l.expires_at < switchboard_now_ms()
             RETURNING {COLUMNS}"
        );
        let row = sqlx::query(&sql)
            .bind(name)
            .bind(owner)
            .bind(ttl_ms(ttl))
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(row_to_lease).transpose()
    }

    pub async fn renew_lease(
        &self,
        name: &str,
        owner: &str,
        fence: i64,
        ttl: Duration,
    ) -> Result<bool> {
        let r = sqlx::query(
            "UPDATE leases SET renewed_at = t.now, expires_at = t.now + $4
               FROM (SELECT switchboard_now_ms() AS now) AS t
              WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at >= t.now",
        )
        .bind(name)
        .bind(owner)
        .bind(fence)
        .bind(ttl_ms(ttl))
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected() == 1)
    }

    pub async fn renew_process(&self, owner: &str, fence: i64, ttl: Duration) -> Result<bool> {
        // One statement: the process lease first; the rest only when it was renewed. (Every
        // data-modifying CTE runs once, to completion, whether or not the query reads it.)
        let renewed: i64 = sqlx::query_scalar(
            "WITH t AS (SELECT switchboard_now_ms() AS now),
             p AS (UPDATE leases SET renewed_at = t.now, expires_at = t.now + $4 FROM t
                    WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at >= t.now
                   RETURNING 1),
             l AS (UPDATE leases SET renewed_at = t.now, expires_at = t.now + $4 FROM t
                    WHERE owner = $2 AND name <> $1 AND expires_at >= t.now
                      AND EXISTS (SELECT 1 FROM p) RETURNING 1),
             r AS (UPDATE runs SET lease_expires_at = t.now + $4 FROM t
                    WHERE lease_owner = $2 AND EXISTS (SELECT 1 FROM p) RETURNING 1),
             o AS (UPDATE outbox SET lease_expires_at = t.now + $4 FROM t
                    WHERE lease_owner = $2 AND EXISTS (SELECT 1 FROM p) RETURNING 1),
             m AS (UPDATE timers SET lease_expires_at = t.now + $4 FROM t
                    WHERE lease_owner = $2 AND EXISTS (SELECT 1 FROM p) RETURNING 1)
             SELECT count(*) FROM p",
        )
        .bind(super::super::leases::process_lease(owner))
        .bind(owner)
        .bind(fence)
        .bind(ttl_ms(ttl))
        .fetch_one(&self.pool)
        .await?;
        Ok(renewed == 1)
    }

    pub async fn release_process(&self, owner: &str) -> Result<()> {
        sqlx::query(
            "WITH t AS (SELECT switchboard_now_ms() - 1 AS past),
             l AS (UPDATE leases SET expires_at = LEAST(expires_at, t.past) FROM t
                    WHERE owner = $1 RETURNING 1),
             r AS (UPDATE runs SET lease_expires_at = t.past FROM t
                    WHERE lease_owner = $1 RETURNING 1),
             o AS (UPDATE outbox SET lease_expires_at = t.past FROM t
                    WHERE lease_owner = $1 RETURNING 1)
             UPDATE timers SET lease_expires_at = t.past FROM t WHERE lease_owner = $1",
        )
        .bind(owner)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn release_lease(&self, name: &str, owner: &str) -> Result<()> {
        // The row stays (its fence must keep rising); an expiry in the past frees it.
        sqlx::query(
            "UPDATE leases SET expires_at = switchboard_now_ms() - 1
              WHERE name = $1 AND owner = $2",
        )
        .bind(name)
        .bind(owner)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn drop_lease(&self, name: &str, owner: &str) -> Result<()> {
        sqlx::query("DELETE FROM leases WHERE name = $1 AND owner = $2")
            .bind(name)
            .bind(owner)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn forget_dead_processes(&self, after: Duration) -> Result<u64> {
        let r = sqlx::query(
            "DELETE FROM leases
              WHERE name LIKE 'process:%' AND expires_at < switchboard_now_ms() - $1",
        )
        .bind(ttl_ms(after))
        .execute(&self.pool)
        .await?;
        Ok(r.rows_affected())
    }

    pub async fn set_shared_mode(&self, shared: bool) -> Result<()> {
        sqlx::query("SELECT switchboard_shared_mode($1)")
            .bind(shared)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn save_inbound_offset_fenced(
        &self,
        channel: &str,
        key: &str,
        next_offset: i64,
        lease: &Lease,
    ) -> Result<bool> {
        let mut tx = self.pool.begin().await?;
        // `FOR SHARE` holds the lease row until this commits: a takeover (an UPDATE of the
        // row) waits for the offset write, or this finds the row changed and writes nothing.
        let held = sqlx::query(
            "SELECT 1 FROM leases WHERE name = $1 AND owner = $2 AND fence = $3 FOR SHARE",
        )
        .bind(&lease.name)
        .bind(&lease.owner)
        .bind(lease.fence)
        .fetch_optional(&mut *tx)
        .await?;
        if held.is_none() {
            return Ok(false);
        }
        super::ledger::write_offset(&mut tx, channel, key, next_offset).await?;
        tx.commit().await?;
        Ok(true)
    }

    pub async fn leases(&self) -> Result<Vec<Lease>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM leases ORDER BY name"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(row_to_lease).collect()
    }
}
