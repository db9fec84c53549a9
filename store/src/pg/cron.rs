//! Scheduled jobs on PostgreSQL (`cron_jobs`): a job's next time is stored, and a due
//! job's message is committed in the same transaction that moves its next time on.

use super::super::cron::decode_cron_job;
use super::super::{now_ms, to_json, CronFire, CronJobRow, JobSource, JobSpec, Result};
use super::inbox::insert_inbox;
use super::Pg;

impl Pg {
    pub async fn cron_jobs<S: JobSpec>(&self) -> Result<Vec<CronJobRow<S>>> {
        let rows = sqlx::query(crate::sql::cron::ALL.pg)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_cron_job).collect()
    }

    pub async fn cron_job<S: JobSpec>(&self, id: &str) -> Result<Option<CronJobRow<S>>> {
        let r = sqlx::query(crate::sql::cron::BY_ID.pg)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_cron_job).transpose()
    }

    /// Enabled jobs whose next time is at or before `now`, soonest first.
    pub async fn due_cron_jobs<S: JobSpec>(&self, now: i64) -> Result<Vec<CronJobRow<S>>> {
        let rows = sqlx::query(crate::sql::cron::DUE.pg)
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_cron_job).collect()
    }

    /// The soonest next time of an enabled job.
    pub async fn next_cron_due(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(crate::sql::cron::NEXT_DUE.pg)
            .fetch_one(&self.pool)
            .await?)
    }

    /// Add a job; `false` when a job with its id exists.
    pub async fn insert_cron_job<S: JobSpec>(
        &self,
        spec: &S,
        source: JobSource,
        next_run_at: Option<i64>,
    ) -> Result<bool> {
        let r = sqlx::query(crate::sql::cron::INSERT.pg)
            .bind(spec.id())
            .bind(source.as_str())
            .bind(to_json(spec)?)
            .bind(spec.enabled())
            .bind(next_run_at)
            .bind(now_ms())
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Bring the config's jobs in (see the SQLite engine's twin), in one transaction.
    pub async fn sync_config_cron_jobs<S: JobSpec>(
        &self,
        upsert: &[(&S, Option<i64>)],
        keep: &[&str],
    ) -> Result<u64> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        for (spec, next) in upsert {
            sqlx::query(crate::sql::cron::UPSERT_CONFIG.pg)
                .bind(spec.id())
                .bind(to_json(*spec)?)
                .bind(spec.enabled())
                .bind(next)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        let keep: Vec<String> = keep.iter().map(|k| k.to_string()).collect();
        let removed =
            sqlx::query("DELETE FROM cron_jobs WHERE source = 'config' AND NOT (id = ANY($1))")
                .bind(&keep)
                .execute(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(removed.rows_affected())
    }

    /// Remove a job; whether there was one.
    pub async fn delete_cron_job(&self, id: &str) -> Result<bool> {
        let r = sqlx::query(crate::sql::cron::DELETE.pg)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Enable (with its next time) or disable a job; whether there was one.
    pub async fn set_cron_job_enabled(
        &self,
        id: &str,
        enabled: bool,
        next_run_at: Option<i64>,
    ) -> Result<bool> {
        let r = sqlx::query(crate::sql::cron::SET_ENABLED.pg)
            .bind(enabled)
            .bind(next_run_at)
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Whether the job's last message is still waiting or its run unfinished.
    pub async fn cron_job_in_flight(&self, last_inbox_id: i64) -> Result<bool> {
        Ok(sqlx::query_scalar(crate::sql::cron::IN_FLIGHT.pg)
            .bind(last_inbox_id)
            .fetch_one(&self.pool)
            .await?)
    }

    /// A due job came due while still running: skipped, its next time moved on.
    pub async fn skip_cron_job(&self, id: &str, next_run_at: Option<i64>) -> Result<()> {
        sqlx::query(crate::sql::cron::SKIP.pg)
            .bind(next_run_at)
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Queue a job's message and record the run, in one transaction. The message's inbox
    /// id.
    pub async fn fire_cron_job(&self, fire: &CronFire<'_>) -> Result<Option<i64>> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        // The job's row first: its lock makes a second firing of the same due time wait,
        // then find the next time moved on and write nothing.
        let due = sqlx::query(crate::sql::cron::FIRE.pg)
            .bind(now)
            .bind(fire.next_run_at)
            .bind(fire.disable)
            .bind(fire.job_id)
            .bind(fire.due_at)
            .execute(&mut *tx)
            .await?;
        if fire.due_at.is_some() && due.rows_affected() == 0 {
            return Ok(None);
        }
        let inbox_id = insert_inbox(
            &mut tx,
            fire.session_key,
            fire.origin,
            fire.sender_id,
            fire.text,
            now,
        )
        .await?;
        sqlx::query(crate::sql::cron::SET_LAST_INBOX.pg)
            .bind(inbox_id)
            .bind(fire.job_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(inbox_id))
    }
}
