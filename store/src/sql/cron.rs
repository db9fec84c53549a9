//! Scheduled jobs' statements (`cron_jobs`), the same on both engines. Bringing the
//! config's jobs in removes the others differently (an array parameter on PostgreSQL),
//! beside each engine's twin.

use super::{sql, Sql};

/// Every job, by id.
pub(crate) const ALL: Sql = sql!("SELECT * FROM cron_jobs ORDER BY id");

/// One job: id.
pub(crate) const BY_ID: Sql = sql!("SELECT * FROM cron_jobs WHERE id = $1");

/// Enabled jobs due at `now`, soonest first: now.
pub(crate) const DUE: Sql = sql!(
    "SELECT * FROM cron_jobs
     WHERE enabled AND next_run_at IS NOT NULL AND next_run_at <= $1
     ORDER BY next_run_at, id"
);

/// The soonest next time of an enabled job, as `t`.
pub(crate) const NEXT_DUE: Sql =
    sql!("SELECT MIN(next_run_at) AS t FROM cron_jobs WHERE enabled AND next_run_at IS NOT NULL");

/// Add a job unless its id exists: id, source, spec, enabled, next_run_at, now.
pub(crate) const INSERT: Sql = sql!(
    "INSERT INTO cron_jobs (id, source, spec, enabled, next_run_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (id) DO NOTHING"
);

/// A config job (re)placed, its counters and last run kept: id, spec, enabled,
/// next_run_at, now.
pub(crate) const UPSERT_CONFIG: Sql = sql!(
    "INSERT INTO cron_jobs (id, source, spec, enabled, next_run_at, created_at, updated_at)
     VALUES ($1, 'config', $2, $3, $4, $5, $5)
     ON CONFLICT (id) DO UPDATE SET source = 'config', spec = excluded.spec,
         enabled = excluded.enabled, next_run_at = excluded.next_run_at,
         updated_at = excluded.updated_at"
);

/// Remove a job: id.
pub(crate) const DELETE: Sql = sql!("DELETE FROM cron_jobs WHERE id = $1");

/// Enable or disable a job: enabled, next_run_at, now, id.
pub(crate) const SET_ENABLED: Sql =
    sql!("UPDATE cron_jobs SET enabled = $1, next_run_at = $2, updated_at = $3 WHERE id = $4");

/// Whether a job's last message still waits or its run is unfinished, as `busy`:
/// last_inbox_id.
pub(crate) const IN_FLIGHT: Sql = sql!(
    "SELECT EXISTS (SELECT 1 FROM inbox WHERE id = $1)
         OR EXISTS (SELECT 1 FROM messages m JOIN runs r ON r.id = m.run_id
                    WHERE m.inbox_id = $1 AND r.status IN ('queued', 'running')) AS busy"
);

/// A due job skipped: next_run_at, now, id.
pub(crate) const SKIP: Sql = sql!(
    "UPDATE cron_jobs SET next_run_at = $1, skipped = skipped + 1, updated_at = $2
     WHERE id = $3"
);

/// A firing recorded while the job's next time is still `due_at` (any time for a manual
/// run, `due_at` NULL): now, next_run_at, disable, id, due_at.
pub(crate) const FIRE: Sql = sql!(
    "UPDATE cron_jobs SET last_run_at = $1, runs = runs + 1, next_run_at = $2,
         enabled = enabled AND NOT $3, updated_at = $1
      WHERE id = $4 AND (" [cast 5 BIGINT] " IS NULL OR next_run_at = $5)"
);

/// The message a firing queued: last_inbox_id, id.
pub(crate) const SET_LAST_INBOX: Sql =
    sql!("UPDATE cron_jobs SET last_inbox_id = $1 WHERE id = $2");
