//! Runs: one agent turn (or sub-agent run) each, with its lifecycle and usage.
//! Ending a run and queueing its reply in the outbox happen in one transaction. (Starting
//! a run is in `starts`, runs cut short outside their loop in `interrupts`.)

use super::super::decode::Columns;

use super::super::runs::decode_run;
use super::messages::{bind_message, NewMessage};
use super::outbox::API_CHANNEL;
use super::states::Outcome;
use super::writer::{script, Args, Params, Script};
use super::{now_ms, to_json, Result, Sqlite, StoreError};
pub(super) use crate::runs::*;

pub(super) async fn insert_run<'e, E>(ex: E, run: &NewRun<'_>) -> Result<()>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    sqlx::query(crate::sql::runs::INSERT.sqlite)
        .bind(run.id)
        .bind(run.session_key)
        .bind(run.session_id)
        .bind(run.agent_id)
        .bind(run.lane)
        .bind(if run.claim_all { "all" } else { "one" })
        .bind(run.origin.map(to_json).transpose()?)
        .bind(run.origin.map(|o| o.channel.as_str()))
        .bind(run.origin.map(|o| o.chat_id.as_str()))
        .bind(run.origin.and_then(|o| o.thread_id.as_deref()))
        .bind(run.model)
        .bind(run.timeout_ms)
        .bind(now_ms())
        .execute(ex)
        .await?;
    Ok(())
}

/// Ending a run that is still queued or running (an ended run is left as it is: the
/// UPDATE returns no row). Each other statement is a no-op when its part does not apply
/// (no last message, no inbox to drop, no reply to deliver or nowhere to deliver it, not a
/// sub-agent's spawn run or its end recorded before, no archive timer). The reply goes to
/// the origin of the newest message the run claimed (a session shared by several chats
/// answers each in its own), else to the run's; never to the HTTP API channel, whose
/// callers read the run. Its channel and chat come from that row's origin columns (bound
/// from Rust when it was stored), never from the origin's JSON. `changes()` in the outbox
/// INSERT is the run UPDATE's count, in the last statement the registry UPDATE's. Rows
/// back: `run` (always, when the run was unfinished), `reply` (a reply was queued in the
/// outbox), `child` (a sub-agent's end recorded now). Twin of `switchboard_finish_run`.
static FINISH: Script = script!(
    "INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id, tool_name, created_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE ?
             AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status IN ('queued', 'running'));
     DELETE FROM inbox WHERE ? AND session_key =
         (SELECT session_key FROM runs WHERE id = ? AND status IN ('queued', 'running'));
     UPDATE runs SET status = ?, error = ?, model = COALESCE(?, model), steps = ?, input_tokens = ?,
             output_tokens = ?, cost_usd = ?, context_tokens = COALESCE(?, context_tokens),
             reply = ?, ended_at = ?
         WHERE id = ? AND status IN ('queued', 'running')
         RETURNING 'run' AS part,
             (SELECT COUNT(*) FROM inbox i WHERE i.session_key = runs.session_key) AS waiting;
     INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, next_attempt_at, created_at)
         SELECT ?, channel, chat_id, thread_id, origin, ?, ?, ? FROM (
             SELECT IIF(m.seq IS NULL, r.origin_channel, m.origin_channel) AS channel,
                 IIF(m.seq IS NULL, r.origin_chat_id, m.origin_chat_id) AS chat_id,
                 IIF(m.seq IS NULL, r.origin_thread_id, m.origin_thread_id) AS thread_id,
                 IIF(m.seq IS NULL, r.origin, m.origin) AS origin
             FROM runs r LEFT JOIN messages m ON m.seq =
                 (SELECT seq FROM messages
                     WHERE session_id = r.session_id AND run_id = r.id AND origin IS NOT NULL
                     ORDER BY seq DESC LIMIT 1)
             WHERE r.id = ? AND r.origin IS NOT NULL AND changes() = 1)
         WHERE ? AND channel <> ?
         ON CONFLICT(key) DO NOTHING
         RETURNING 'reply' AS part;
     UPDATE subagent_runs SET outcome = ?, error = COALESCE(?, error), ended_at = ?,
             announce_state = 'pending', archive_at = ?
         WHERE run_id = ? AND outcome IS NULL
         RETURNING 'child' AS part;
     INSERT INTO timers (kind, target, due_at)
         SELECT 'archive', child_session_key, archive_at FROM subagent_runs
         WHERE run_id = ? AND archive_at IS NOT NULL AND changes() = 1
         ON CONFLICT(kind, target) DO UPDATE SET due_at = excluded.due_at;"
);

/// The parameters of [`FINISH`].
pub(super) struct Finish<'a> {
    pub(super) id: &'a str,
    pub(super) end: &'a RunEnd,
    /// The run's final answer and the session it goes to.
    pub(super) last: Option<(&'a str, &'a NewMessage)>,
    pub(super) now: i64,
}

impl Params for Finish<'_> {
    fn script(&self) -> &'static Script {
        &FINISH
    }

    fn args(&self) -> Result<Args> {
        let Finish { id, end, now, .. } = *self;
        let (last_session, last) = self.last.unzip();
        // the last message
        Ok(
            bind_message(Args::default().bind(last_session).bind(id), last)?
                .bind(now)
                .bind(last.is_some())
                .bind(id)
                // the waiting messages
                .bind(end.drop_inbox)
                .bind(id)
                // the run
                .bind(end.status.as_str())
                .bind(end.error.as_deref())
                .bind(end.model.as_deref())
                .bind(end.steps)
                .bind(end.input_tokens)
                .bind(end.output_tokens)
                .bind(end.cost_usd)
                .bind(end.context_tokens)
                .bind(end.reply.as_deref())
                .bind(now)
                .bind(id)
                // the reply's delivery
                .bind(format!("run:{id}:reply"))
                .bind(end.deliver.as_deref())
                .bind(now)
                .bind(now)
                .bind(id)
                .bind(end.deliver.is_some())
                .bind(API_CHANNEL)
                // the sub-agent registry and its archive timer
                .bind(Outcome::of(end.status).as_str())
                .bind(end.error.as_deref())
                .bind(now)
                .bind(end.archive_after_ms.map(|ms| now + ms))
                .bind(id)
                .bind(id),
        )
    }
}

impl Sqlite {
    /// Insert a queued run; returns its row (`created_at` read from the clock again).
    pub async fn create_run(&self, run: &NewRun<'_>) -> Result<RunRow> {
        insert_run(&mut *self.writer().await, run).await?;
        Ok(queued_row(run))
    }

    pub async fn get_run(&self, id: &str) -> Result<Option<RunRow>> {
        let r = sqlx::query(crate::sql::runs::BY_ID.sqlite)
            .bind(id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_run).transpose()
    }

    /// Record progress (steps and usage so far) on a running run (an ended run keeps what
    /// its end recorded).
    pub async fn update_run_usage(
        &self,
        id: &str,
        steps: i64,
        input_tokens: i64,
        output_tokens: i64,
    ) -> Result<()> {
        sqlx::query(crate::sql::runs::PROGRESS.sqlite)
            .bind(steps)
            .bind(input_tokens)
            .bind(output_tokens)
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// End a run that is still queued or running and, in the same transaction, queue its
    /// reply for delivery. `NotFound` when there is no such run or it had ended already.
    pub async fn finish_run(&self, id: &str, end: &RunEnd) -> Result<RunFinished> {
        self.finish_run_with(id, end, None).await
    }

    /// [`Sqlite::finish_run`], storing the run's last message (its final answer) to the
    /// session `last.0` in the same transaction.
    pub async fn finish_run_with(
        &self,
        id: &str,
        end: &RunEnd,
        last: Option<(&str, &NewMessage)>,
    ) -> Result<RunFinished> {
        let rows = self
            .conns
            .write(&Finish {
                id,
                end,
                last,
                now: now_ms(),
            })
            .await?;
        let (mut finished, mut announce, mut reply_queued) = (None, false, false);
        for r in &rows {
            match r.text("part")? {
                "run" => finished = Some(r.int("waiting")?),
                "reply" => reply_queued = true,
                "child" => announce = true,
                other => return Err(StoreError::Corrupt(format!("run end: row {other}"))),
            }
        }
        let Some(waiting) = finished else {
            return Err(StoreError::NotFound(format!("run {id}")));
        };
        Ok(RunFinished {
            waiting,
            announce,
            reply_queued,
        })
    }
    /// Runs that were queued or running when the process stopped.
    pub async fn take_over_runs(&self) -> Result<Vec<RunRow>> {
        // One process per database file: every unfinished run is this process's.
        self.unfinished_runs().await
    }

    pub async fn unfinished_runs(&self) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(crate::sql::runs::UNFINISHED.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_run).collect()
    }

    /// Each running run, whichever process runs it: its session key and id.
    pub async fn running_runs(&self) -> Result<Vec<(String, String)>> {
        Ok(sqlx::query_as(crate::sql::runs::RUNNING.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?)
    }

    /// The most recent runs of a session, newest first.
    pub async fn session_runs(&self, session_key: &str, limit: i64) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(crate::sql::runs::OF_SESSION.sqlite)
            .bind(session_key)
            .bind(limit)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_run).collect()
    }
}
