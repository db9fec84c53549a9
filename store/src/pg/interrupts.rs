//! Runs cut short outside their own loop, on PostgreSQL: the shutdown checkpoint, runs
//! taken off their lane before they started, dropping what waits in a session, and what
//! a run claimed.

use super::super::{now_ms, Result, RunRow};
use super::Pg;

impl Pg {
    /// Checkpoint a running run at shutdown: record its steps and usage so far (it stays
    /// `running`, to be resumed or ended at the next start).
    pub async fn checkpoint_run(
        &self,
        id: &str,
        steps: i64,
        input_tokens: i64,
        output_tokens: i64,
    ) -> Result<()> {
        self.update_run_usage(id, steps, input_tokens, output_tokens)
            .await
    }

    /// Mark a run cancelled that was taken off its lane before it started.
    pub async fn cancel_queued_run(&self, id: &str) -> Result<()> {
        sqlx::query(crate::sql::interrupts::CANCEL_UNSTARTED.pg)
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Drop what waits in a session, in one transaction: the runs `run_ids` end
    /// `cancelled` with `error`, its waiting messages are deleted. The inbox ids dropped.
    pub async fn drop_waiting(
        &self,
        session_key: &str,
        run_ids: &[String],
        error: &str,
    ) -> Result<Vec<i64>> {
        let mut tx = self.pool.begin().await?;
        // Twin of SQLite's UPDATE per id: one statement over the ids as an array.
        sqlx::query(
            "UPDATE runs SET status = 'cancelled', error = $1, ended_at = $2
             WHERE id = ANY($3) AND status IN ('queued', 'running')",
        )
        .bind(error)
        .bind(now_ms())
        .bind(run_ids)
        .execute(&mut *tx)
        .await?;
        let mut ids: Vec<i64> = sqlx::query_scalar(crate::sql::interrupts::DROP_WAITING.pg)
            .bind(session_key)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// The inbox ids of the messages a run claimed.
    pub async fn claimed_by(&self, run: &RunRow) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(crate::sql::interrupts::CLAIMED_BY.pg)
            .bind(&run.session_id)
            .bind(&run.id)
            .fetch_all(&self.pool)
            .await?)
    }
}
