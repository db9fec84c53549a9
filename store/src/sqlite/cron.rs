//! Scheduled jobs (`cron_jobs`): the one durable table behind `cron.jobs[]`, the `cron`
//! tool, `/cron` and `switchboard cron`. A job's next time is stored, and a due job's
//! message is committed in the same transaction that moves its next time on, so a crash
//! neither loses a run nor makes one twice.

use sqlx::Row;

use super::super::cron::decode_cron_job;
use super::inbox::insert_inbox;
use super::{begin_write, now_ms, to_json, Result, Sqlite};
pub(super) use crate::cron::*;

impl Sqlite {
    pub async fn cron_jobs<S: JobSpec>(&self) -> Result<Vec<CronJobRow<S>>> {
        let rows = sqlx::query(crate::sql::cron::ALL.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_cron_job).collect()
    }

    pub async fn cron_job<S: JobSpec>(&self, id: &str) -> Result<Option<CronJobRow<S>>> {
        let r = sqlx::query(crate::sql::cron::BY_ID.sqlite)
            .bind(id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_cron_job).transpose()
    }

    /// Enabled jobs whose next time is at or before `now`, soonest first.
    pub async fn due_cron_jobs<S: JobSpec>(&self, now: i64) -> Result<Vec<CronJobRow<S>>> {
        let rows = sqlx::query(crate::sql::cron::DUE.sqlite)
            .bind(now)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_cron_job).collect()
    }

    /// The soonest next time of an enabled job.
    pub async fn next_cron_due(&self) -> Result<Option<i64>> {
        let r = sqlx::query(crate::sql::cron::NEXT_DUE.sqlite)
            .fetch_one(&mut *self.reader().await)
            .await?;
        Ok(r.try_get("t")?)
    }

    /// Add a job; `false` when a job with its id exists.
    pub async fn insert_cron_job<S: JobSpec>(
        &self,
        spec: &S,
        source: JobSource,
        next_run_at: Option<i64>,
    ) -> Result<bool> {
        let now = now_ms();
        let r = sqlx::query(crate::sql::cron::INSERT.sqlite)
            .bind(spec.id())
            .bind(source.as_str())
            .bind(to_json(spec)?)
            .bind(spec.enabled())
            .bind(next_run_at)
            .bind(now)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Bring the config's jobs in: `upsert` (job, next time) replaces a job of that id
    /// (its counters and last run kept), and config jobs whose id is not in `keep` go.
    /// Jobs added by the tool or the CLI are never removed here. One transaction.
    pub async fn sync_config_cron_jobs<S: JobSpec>(
        &self,
        upsert: &[(&S, Option<i64>)],
        keep: &[&str],
    ) -> Result<u64> {
        let now = now_ms();
        let mut w = self.writer().await;
        let mut tx = begin_write(&mut w).await?;
        for (spec, next) in upsert {
            sqlx::query(crate::sql::cron::UPSERT_CONFIG.sqlite)
                .bind(spec.id())
                .bind(to_json(*spec)?)
                .bind(spec.enabled())
                .bind(next)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        let rows = sqlx::query("SELECT id FROM cron_jobs WHERE source = 'config'")
            .fetch_all(&mut *tx)
            .await?;
        let mut removed = 0;
        for r in rows {
            let id: String = r.try_get("id")?;
            if !keep.contains(&id.as_str()) {
                sqlx::query(crate::sql::cron::DELETE.sqlite)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                removed += 1;
            }
        }
        tx.commit().await?;
        Ok(removed)
    }

    /// Remove a job; whether there was one.
    pub async fn delete_cron_job(&self, id: &str) -> Result<bool> {
        let r = sqlx::query("DELETE FROM cron_jobs WHERE id = ?")
            .bind(id)
            .execute(&mut *self.writer().await)
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
        let r = sqlx::query(crate::sql::cron::SET_ENABLED.sqlite)
            .bind(enabled)
            .bind(next_run_at)
            .bind(now_ms())
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Whether the job's last message is still waiting or its run unfinished.
    pub async fn cron_job_in_flight(&self, last_inbox_id: i64) -> Result<bool> {
        let r = sqlx::query(crate::sql::cron::IN_FLIGHT.sqlite)
            .bind(last_inbox_id)
            .fetch_one(&mut *self.reader().await)
            .await?;
        Ok(r.try_get("busy")?)
    }

    /// A due job came due while still running: skipped, its next time moved on.
    pub async fn skip_cron_job(&self, id: &str, next_run_at: Option<i64>) -> Result<()> {
        sqlx::query(crate::sql::cron::SKIP.sqlite)
            .bind(next_run_at)
            .bind(now_ms())
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Queue a job's message and record the run (next time, last run, a one-shot
    /// disabled), in one transaction. Returns the message's inbox id.
    pub async fn fire_cron_job(&self, fire: &CronFire<'_>) -> Result<Option<i64>> {
        let now = now_ms();
        let mut w = self.writer().await;
        let mut tx = begin_write(&mut w).await?;
        let due = sqlx::query(crate::sql::cron::FIRE.sqlite)
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
            &mut *tx,
            fire.session_key,
            fire.origin,
            fire.sender_id,
            fire.text,
        )
        .await?;
        sqlx::query(crate::sql::cron::SET_LAST_INBOX.sqlite)
            .bind(inbox_id)
            .bind(fire.job_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(inbox_id))
    }
}
