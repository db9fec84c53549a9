//! Runs on PostgreSQL: queued, read, their usage recorded, and ended. Ending a run is one
//! call of `switchboard_finish_run` (migration 0004), one round trip and its own
//! transaction: the run's UPDATE comes first and gates the rest by its row (an ended run
//! is left as it is and nothing else is written), then the last message, the dropped
//! inbox, the reply in the outbox, the sub-agent registry and its archive timer.

use sqlx::Row;

use super::super::runs::decode_run;
use super::super::runs::queued_row;
use super::super::states::Outcome;
use super::super::{
    now_ms, to_json, NewMessage, NewRun, Result, RunEnd, RunFinished, RunRow, StoreError,
    API_CHANNEL,
};
use super::inbox::insert_run;
use super::Pg;

impl Pg {
    /// Insert a queued run; returns its row.
    pub async fn create_run(&self, run: &NewRun<'_>) -> Result<RunRow> {
        let mut c = self.pool.acquire().await?;
        insert_run(&mut c, run, now_ms()).await?;
        Ok(queued_row(run))
    }

    pub async fn get_run(&self, id: &str) -> Result<Option<RunRow>> {
        let r = sqlx::query(crate::sql::runs::BY_ID.pg)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_run).transpose()
    }

    /// Record progress on a running run (an ended run keeps what its end recorded).
    pub async fn update_run_usage(
        &self,
        id: &str,
        steps: i64,
        input_tokens: i64,
        output_tokens: i64,
    ) -> Result<()> {
        sqlx::query(crate::sql::runs::PROGRESS.pg)
            .bind(steps)
            .bind(input_tokens)
            .bind(output_tokens)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// End a run that is still queued or running and queue its reply, in one transaction.
    pub async fn finish_run(&self, id: &str, end: &RunEnd) -> Result<RunFinished> {
        self.finish_run_with(id, end, None).await
    }

    /// [`Pg::finish_run`], storing the run's last message to the session `last.0` in the
    /// same transaction. `NotFound` when there is no such run or it had ended already.
    /// One call of `switchboard_finish_run` (migration 0004): the run's UPDATE gates the
    /// rest; then the last message, the dropped inbox, the waiting count (read after that
    /// delete), the reply in the outbox, the sub-agent registry and its archive timer.
    pub async fn finish_run_with(
        &self,
        id: &str,
        end: &RunEnd,
        last: Option<(&str, &NewMessage)>,
    ) -> Result<RunFinished> {
        // The last call's context size: a statement of its own here, as before the end
        // (the function's parameters are migration 0004's).
        if let Some(context_tokens) = end.context_tokens {
            let usage = crate::usage::CallUsage {
                steps: end.steps,
                input_tokens: end.input_tokens,
                output_tokens: end.output_tokens,
                context_tokens,
                cost_usd: end.cost_usd,
            };
            self.record_model_call(id, &usage).await?;
        }
        let now = now_ms();
        let msg = last.map(|(_, m)| m);
        let calls = match msg {
            Some(m) if !m.tool_calls.is_empty() => Some(to_json(&m.tool_calls)?),
            _ => None,
        };
        let r = sqlx::query(
            "SELECT waiting, announce, reply_queued FROM switchboard_finish_run($1, $2, $3, $4,
                 $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                 $21, $22, $23)",
        )
        .bind(id)
        .bind(end.status.as_str())
        .bind(end.error.as_deref())
        .bind(end.model.as_deref())
        .bind(end.steps)
        .bind(end.input_tokens)
        .bind(end.output_tokens)
        .bind(end.cost_usd)
        .bind(end.reply.as_deref())
        .bind(now)
        .bind(last.map(|(session_id, _)| session_id))
        .bind(msg.map(|m| m.role.as_str()))
        .bind(msg.map(|m| m.content.as_str()))
        .bind(calls)
        .bind(msg.and_then(|m| m.tool_call_id.as_deref()))
        .bind(msg.and_then(|m| m.tool_name.as_deref()))
        .bind(msg.map(|_| now))
        .bind(end.drop_inbox)
        .bind(end.deliver.as_deref())
        .bind(format!("run:{id}:reply"))
        .bind(API_CHANNEL)
        .bind(Outcome::of(end.status).as_str())
        .bind(end.archive_after_ms.map(|ms| now + ms))
        .fetch_optional(&self.pool)
        .await?;
        let Some(r) = r else {
            return Err(StoreError::NotFound(format!("run {id}")));
        };
        Ok(RunFinished {
            waiting: r.try_get("waiting")?,
            announce: r.try_get("announce")?,
            reply_queued: r.try_get("reply_queued")?,
        })
    }

    /// Runs that were queued or running when the process stopped.
    pub async fn unfinished_runs(&self) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(crate::sql::runs::UNFINISHED.pg)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_run).collect()
    }

    /// Each running run, whichever process runs it: its session key and id.
    pub async fn running_runs(&self) -> Result<Vec<(String, String)>> {
        Ok(sqlx::query_as(crate::sql::runs::RUNNING.pg)
            .fetch_all(&self.pool)
            .await?)
    }

    /// The most recent runs of a session, newest first.
    pub async fn session_runs(&self, session_key: &str, limit: i64) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(crate::sql::runs::OF_SESSION.pg)
            .bind(session_key)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_run).collect()
    }
}
