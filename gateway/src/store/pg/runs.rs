//! Runs on PostgreSQL: queued, read, their usage recorded, and ended. Ending a run is one
//! transaction: the run's UPDATE comes first and gates the rest by its row (an ended run
//! is left as it is and nothing else is written), then the last message, the dropped
//! inbox, the reply in the outbox, the sub-agent registry and its archive timer.

use sqlx::{PgConnection, Row};

use super::super::runs::decode_run;
use super::super::runs::queued_row;
use super::super::states::Outcome;
use super::super::{
    now_ms, NewMessage, NewRun, Result, RunEnd, RunFinished, RunRow, StoreError, API_CHANNEL,
};
use super::inbox::insert_run;
use super::messages::insert_message;
use super::Pg;

impl Pg {
    /// Insert a queued run; returns its row.
    pub async fn create_run(&self, run: &NewRun<'_>) -> Result<RunRow> {
        let mut c = self.pool.acquire().await?;
        insert_run(&mut c, run, now_ms()).await?;
        Ok(queued_row(run))
    }

    pub async fn get_run(&self, id: &str) -> Result<Option<RunRow>> {
        let r = sqlx::query("SELECT * FROM runs WHERE id = $1")
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
        sqlx::query(
            "UPDATE runs SET steps = $1, input_tokens = $2, output_tokens = $3
             WHERE id = $4 AND status = 'running'",
        )
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
    pub async fn finish_run_with(
        &self,
        id: &str,
        end: &RunEnd,
        last: Option<(&str, &NewMessage)>,
    ) -> Result<RunFinished> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let ended = sqlx::query(
            "UPDATE runs SET status = $1, error = $2, model = COALESCE($3, model), steps = $4,
                 input_tokens = $5, output_tokens = $6, cost_usd = $7, reply = $8, ended_at = $9
             WHERE id = $10 AND status IN ('queued', 'running')
             RETURNING session_key",
        )
        .bind(end.status.as_str())
        .bind(end.error.as_deref())
        .bind(end.model.as_deref())
        .bind(end.steps)
        .bind(end.input_tokens)
        .bind(end.output_tokens)
        .bind(end.cost_usd)
        .bind(end.reply.as_deref())
        .bind(now)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(ended) = ended else {
            return Err(StoreError::NotFound(format!("run {id}")));
        };
        let session_key: String = ended.try_get("session_key")?;
        if let Some((session_id, m)) = last {
            insert_message(&mut *tx, session_id, Some(id), m).await?;
        }
        if end.drop_inbox {
            sqlx::query("DELETE FROM inbox WHERE session_key = $1")
                .bind(&session_key)
                .execute(&mut *tx)
                .await?;
        }
        let waiting: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM inbox WHERE session_key = $1")
            .bind(&session_key)
            .fetch_one(&mut *tx)
            .await?;
        let reply_queued = match end.deliver.as_deref() {
            Some(text) => queue_reply(&mut tx, id, text, now).await?,
            None => false,
        };
        let announce = end_child(&mut tx, id, end, now).await?;
        tx.commit().await?;
        Ok(RunFinished {
            waiting,
            announce,
            reply_queued,
        })
    }

    /// Runs that were queued or running when the process stopped.
    pub async fn unfinished_runs(&self) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(
            "SELECT * FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, seq",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_run).collect()
    }

    /// The most recent runs of a session, newest first.
    pub async fn session_runs(&self, session_key: &str, limit: i64) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(
            "SELECT * FROM runs WHERE session_key = $1
             ORDER BY created_at DESC, seq DESC LIMIT $2",
        )
        .bind(session_key)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_run).collect()
    }
}

/// The reply of run `id` in the outbox (key `run:<id>:reply`): to the chat of the newest
/// message the run claimed, else the run's origin; never to the HTTP API channel, never
/// for a run without an origin. Its chat comes from the origin columns, never the JSON.
/// Whether a row was queued.
async fn queue_reply(c: &mut PgConnection, id: &str, text: &str, now: i64) -> Result<bool> {
    let queued = sqlx::query(
        "INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, next_attempt_at,
             created_at)
         SELECT $1, channel, chat_id, thread_id, origin, $2, $3, $3 FROM (
             SELECT CASE WHEN m.seq IS NULL THEN r.origin_channel ELSE m.origin_channel END
                        AS channel,
                    CASE WHEN m.seq IS NULL THEN r.origin_chat_id ELSE m.origin_chat_id END
                        AS chat_id,
                    CASE WHEN m.seq IS NULL THEN r.origin_thread_id ELSE m.origin_thread_id END
                        AS thread_id,
                    CASE WHEN m.seq IS NULL THEN r.origin ELSE m.origin END AS origin
             FROM runs r LEFT JOIN messages m ON m.seq =
                 (SELECT seq FROM messages
                     WHERE session_id = r.session_id AND run_id = r.id AND origin IS NOT NULL
                     ORDER BY seq DESC LIMIT 1)
             WHERE r.id = $4 AND r.origin IS NOT NULL) AS o
         WHERE channel <> $5
         ON CONFLICT (key) DO NOTHING",
    )
    .bind(format!("run:{id}:reply"))
    .bind(text)
    .bind(now)
    .bind(id)
    .bind(API_CHANNEL)
    .execute(&mut *c)
    .await?;
    Ok(queued.rows_affected() == 1)
}

/// A sub-agent's run end in the registry (its announce becomes pending) and, with an
/// archive time, its archive timer; only the first end of a child is recorded. Whether it
/// was recorded now.
async fn end_child(c: &mut PgConnection, id: &str, end: &RunEnd, now: i64) -> Result<bool> {
    let child = sqlx::query(
        "UPDATE subagent_runs SET outcome = $1, error = COALESCE($2, error), ended_at = $3,
             announce_state = 'pending', archive_at = $4
         WHERE run_id = $5 AND outcome IS NULL
         RETURNING child_session_key, archive_at",
    )
    .bind(Outcome::of(end.status).as_str())
    .bind(end.error.as_deref())
    .bind(now)
    .bind(end.archive_after_ms.map(|ms| now + ms))
    .bind(id)
    .fetch_optional(&mut *c)
    .await?;
    let Some(child) = child else {
        return Ok(false);
    };
    let archive_at: Option<i64> = child.try_get("archive_at")?;
    if let Some(due) = archive_at {
        sqlx::query(
            "INSERT INTO timers (kind, target, due_at) VALUES ('archive', $1, $2)
             ON CONFLICT (kind, target) DO UPDATE SET due_at = excluded.due_at",
        )
        .bind(child.try_get::<String, _>("child_session_key")?)
        .bind(due)
        .execute(&mut *c)
        .await?;
    }
    Ok(true)
}
