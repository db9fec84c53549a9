//! Runs cut short outside their own loop: the shutdown checkpoint, runs taken off their
//! lane before they started, dropping what waits in a session, and what a run claimed
//! (for an end written on its behalf).

use sqlx::Row;

use super::runs::RunRow;
use super::{now_ms, Result, Sqlite};

impl Sqlite {
    /// Checkpoint a running run at shutdown: record its steps and usage so far. It stays
    /// `running` (mid-flight): the next start resumes it from its transcript, or ends it
    /// as interrupted (`subagents.onRestart: "interrupt"`), and does not let it claim
    /// messages again (they belong to the runs queued behind it).
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
}

impl Sqlite {
    /// Mark a run cancelled that was taken off its lane before it started (queued, or
    /// `running` but not yet resumed after a restart).
    pub async fn cancel_queued_run(&self, id: &str) -> Result<()> {
        sqlx::query(crate::sql::interrupts::CANCEL_UNSTARTED.sqlite)
            .bind(now_ms())
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Drop what waits in a session, in one transaction: the runs `run_ids` (taken off
    /// their lane before they started) end `cancelled` with `error`, and its waiting
    /// messages are deleted. Returns the inbox ids of the messages dropped.
    pub async fn drop_waiting(
        &self,
        session_key: &str,
        run_ids: &[String],
        error: &str,
    ) -> Result<Vec<i64>> {
        let now = now_ms();
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        // Twin of PostgreSQL's one UPDATE over `= ANY($3)`: SQLite has no array parameters.
        for id in run_ids {
            sqlx::query("UPDATE runs SET status = 'cancelled', error = ?, ended_at = ? WHERE id = ? AND status IN ('queued', 'running')")
                .bind(error)
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        let rows = sqlx::query(crate::sql::interrupts::DROP_WAITING.sqlite)
            .bind(session_key)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        let mut ids = rows
            .iter()
            .map(|r| r.try_get("id"))
            .collect::<std::result::Result<Vec<i64>, _>>()?;
        ids.sort_unstable();
        Ok(ids)
    }

    /// The inbox ids of the messages a run claimed (for a `run.ended` event written after
    /// the run's own code stopped, e.g. by a panic).
    pub async fn claimed_by(&self, run: &RunRow) -> Result<Vec<i64>> {
        let rows = sqlx::query(crate::sql::interrupts::CLAIMED_BY.sqlite)
            .bind(&run.session_id)
            .bind(&run.id)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(|r| Ok(r.try_get("inbox_id")?)).collect()
    }
}
