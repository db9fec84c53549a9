//! Runs: one agent turn (or sub-agent run) each, with its lifecycle and usage.
//! Ending a run and queueing its reply in the outbox happen in one transaction.

use std::sync::Arc;

use serde::Serialize;
use sqlx::sqlite::SqliteRow;
use sqlx::Row;
use switchboard_channels::Origin;

use super::inbox::{row_to_claimed, Claim, InboxItem};
use super::messages::{bind_message, row_to_message, MessageRow, NewMessage};
use super::writer::{script, Args, Script};
use super::{from_json, now_ms, to_json, Result, Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
    Timeout,
    Cancelled,
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Timeout => "timeout",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Result<RunStatus> {
        Ok(match s {
            "queued" => RunStatus::Queued,
            "running" => RunStatus::Running,
            "succeeded" => RunStatus::Succeeded,
            "failed" => RunStatus::Failed,
            "timeout" => RunStatus::Timeout,
            "cancelled" => RunStatus::Cancelled,
            "interrupted" => RunStatus::Interrupted,
            other => return Err(StoreError::Corrupt(format!("unknown run status {other}"))),
        })
    }

    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    pub id: String,
    pub session_key: String,
    pub session_id: String,
    pub agent_id: String,
    pub lane: String,
    pub claim_all: bool,
    pub status: RunStatus,
    pub origin: Option<Origin>,
    pub model: Option<String>,
    pub error: Option<String>,
    pub steps: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_usd: Option<f64>,
    pub reply: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub timeout_ms: Option<i64>,
}

fn row_to_run(r: &sqlx::sqlite::SqliteRow) -> Result<RunRow> {
    let status: String = r.try_get("status")?;
    let origin: Option<String> = r.try_get("origin")?;
    let claim: String = r.try_get("claim")?;
    Ok(RunRow {
        id: r.try_get("id")?,
        session_key: r.try_get("session_key")?,
        session_id: r.try_get("session_id")?,
        agent_id: r.try_get("agent_id")?,
        lane: r.try_get("lane")?,
        claim_all: claim == "all",
        status: RunStatus::parse(&status)?,
        origin: origin.as_deref().map(from_json).transpose()?,
        model: r.try_get("model")?,
        error: r.try_get("error")?,
        steps: r.try_get("steps")?,
        input_tokens: r.try_get("input_tokens")?,
        output_tokens: r.try_get("output_tokens")?,
        cost_usd: r.try_get("cost_usd")?,
        reply: r.try_get("reply")?,
        created_at: r.try_get("created_at")?,
        started_at: r.try_get("started_at")?,
        ended_at: r.try_get("ended_at")?,
        timeout_ms: r.try_get("timeout_ms")?,
    })
}

#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub id: &'a str,
    pub session_key: &'a str,
    pub session_id: &'a str,
    pub agent_id: &'a str,
    pub lane: &'a str,
    pub claim_all: bool,
    pub origin: Option<&'a Origin>,
    /// A model fixed at creation (`provider/model`), else the agent's default at start.
    pub model: Option<&'a str>,
    /// A run timeout of its own, else the configured default.
    pub timeout_ms: Option<i64>,
}

pub(super) async fn insert_run<'e, E>(ex: E, run: &NewRun<'_>) -> Result<()>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    sqlx::query(
        "INSERT INTO runs (id, session_key, session_id, agent_id, lane, claim, status, origin, model, timeout_ms, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?)",
    )
    .bind(run.id)
    .bind(run.session_key)
    .bind(run.session_id)
    .bind(run.agent_id)
    .bind(run.lane)
    .bind(if run.claim_all { "all" } else { "one" })
    .bind(run.origin.map(to_json).transpose()?)
    .bind(run.model)
    .bind(run.timeout_ms)
    .bind(now_ms())
    .execute(ex)
    .await?;
    Ok(())
}

/// The row of a run just inserted by [`insert_run`].
pub(super) fn queued_row(run: &NewRun<'_>) -> RunRow {
    RunRow {
        id: run.id.to_string(),
        session_key: run.session_key.to_string(),
        session_id: run.session_id.to_string(),
        agent_id: run.agent_id.to_string(),
        lane: run.lane.to_string(),
        claim_all: run.claim_all,
        status: RunStatus::Queued,
        origin: run.origin.cloned(),
        model: run.model.map(str::to_string),
        error: None,
        steps: 0,
        input_tokens: 0,
        output_tokens: 0,
        cost_usd: None,
        reply: None,
        created_at: now_ms(),
        started_at: None,
        ended_at: None,
        timeout_ms: run.timeout_ms,
    }
}

impl RunEnd {
    /// An end with nothing to record but its status and error: no model, usage, reply or
    /// delivery (stopped before it started, failed outside the agent loop).
    pub fn bare(status: RunStatus, error: Option<String>) -> RunEnd {
        RunEnd {
            status,
            error,
            model: None,
            steps: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            reply: None,
            deliver: None,
            archive_after_ms: None,
            drop_inbox: false,
        }
    }
}

/// What starting a run found: the messages it claimed (oldest first), the session's
/// whole transcript, those included, and when the run first started (a resumed run keeps
/// the time of its first start: its runtime and its run timeout count from there).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Started {
    pub claimed: Vec<InboxItem>,
    pub transcript: Vec<MessageRow>,
    pub started_at: Option<i64>,
}

/// What ending a run left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunFinished {
    /// Messages waiting in the session's inbox (for a run still to be queued).
    pub waiting: i64,
    /// The run was a sub-agent's, and its end was recorded now: its announce is pending.
    pub announce: bool,
}

/// How a run ended, and what (if anything) to send to its origin.
#[derive(Debug, Clone)]
pub struct RunEnd {
    pub status: RunStatus,
    pub error: Option<String>,
    pub model: Option<String>,
    pub steps: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_usd: Option<f64>,
    pub reply: Option<String>,
    /// Text to deliver through the outbox (key `run:<id>:reply`), to the chat of the newest
    /// message the run claimed (else the run's origin). Not for a run without an origin
    /// (a sub-agent's) or whose answer goes to an HTTP API caller (it reads the run).
    pub deliver: Option<String>,
    /// For a sub-agent's spawn run: archive its session this long after it ends (None = never).
    pub archive_after_ms: Option<i64>,
    /// Drop the messages waiting in the run's session with it (a child stopped before it
    /// started: its task goes with it, so no later start runs it).
    pub drop_inbox: bool,
}

/// Ending a run that is still queued or running (an ended run is left as it is: the
/// UPDATE returns no row). Each other statement is a no-op when its part does not apply
/// (no last message, no inbox to drop, no reply to deliver or nowhere to deliver it, not a
/// sub-agent's spawn run or its end recorded before, no archive timer). The reply goes to
/// the origin of the newest message the run claimed (a session shared by several chats
/// answers each in its own), else to the run's; never to the HTTP API channel, whose
/// callers read the run. `changes()` in the outbox INSERT is the run UPDATE's count, in
/// the last statement the registry UPDATE's.
static FINISH: Script = script!(
    "INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id, tool_name, created_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE ?
             AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status IN ('queued', 'running'));
     DELETE FROM inbox WHERE ? AND session_key =
         (SELECT session_key FROM runs WHERE id = ? AND status IN ('queued', 'running'));
     UPDATE runs SET status = ?, error = ?, model = COALESCE(?, model), steps = ?, input_tokens = ?,
             output_tokens = ?, cost_usd = ?, reply = ?, ended_at = ?
         WHERE id = ? AND status IN ('queued', 'running')
         RETURNING 'run' AS part,
             (SELECT COUNT(*) FROM inbox i WHERE i.session_key = runs.session_key) AS waiting;
     INSERT INTO outbox (key, channel, origin, text, next_attempt_at, created_at)
         SELECT ?, json_extract(o, '$.channel'), o, ?, ?, ? FROM (
             SELECT CASE WHEN r.origin IS NULL THEN NULL ELSE COALESCE(
                 (SELECT m.origin FROM messages m
                     WHERE m.session_id = r.session_id AND m.run_id = r.id AND m.origin IS NOT NULL
                     ORDER BY m.seq DESC LIMIT 1),
                 r.origin) END AS o
             FROM runs r WHERE r.id = ? AND changes() = 1)
         WHERE o IS NOT NULL AND ? AND json_extract(o, '$.channel') <> ?
         ON CONFLICT(key) DO NOTHING;
     UPDATE subagent_runs SET outcome = ?, error = COALESCE(?, error), ended_at = ?,
             announce_state = 'pending', archive_at = ?
         WHERE run_id = ? AND outcome IS NULL
         RETURNING 'child' AS part;
     INSERT INTO timers (kind, target, due_at)
         SELECT 'archive', child_session_key, archive_at FROM subagent_runs
         WHERE run_id = ? AND archive_at IS NOT NULL AND changes() = 1
         ON CONFLICT(kind, target) DO UPDATE SET due_at = excluded.due_at;"
);

/// Starting a run: every statement after the UPDATE acts only if it started the run
/// (after it, the run is `running` exactly when it was queued or running before). A run
/// resumed after a restart keeps the time of its first start. (A macro, so the
/// accept-and-start script can repeat it.)
macro_rules! start_sql {
    () => {
        "UPDATE runs SET status = 'running', started_at = COALESCE(started_at, ?), session_id = ?,
                 model = COALESCE(model, ?)
             WHERE id = ? AND status IN ('queued', 'running')
             RETURNING 'started' AS part, started_at;
         INSERT INTO messages (session_id, run_id, role, content, created_at, inbox_id, origin, sender_id)
             SELECT ?, ?, 'user', text, ?, id, origin, sender_id FROM inbox
             WHERE session_key = ? AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status = 'running')
             ORDER BY id LIMIT ?
             RETURNING 'claimed' AS part, inbox_id, origin, sender_id, content;
         SELECT 'transcript' AS part, * FROM messages
             WHERE session_id = ? AND seq > ?
                 AND EXISTS (SELECT 1 FROM runs WHERE id = ? AND status = 'running')
             ORDER BY seq;\n"
    };
}
pub(super) use start_sql;

static START: Script = script!(start_sql!());

/// A run's start, as `start_sql!` takes it.
pub(super) struct StartRun<'a> {
    pub(super) id: &'a str,
    pub(super) session_key: &'a str,
    pub(super) session_id: &'a str,
    pub(super) model: Option<&'a str>,
    pub(super) claim: Option<Claim>,
    /// The session's transcript as cached: the start reads the messages after it.
    pub(super) cached: Arc<Vec<MessageRow>>,
}

/// The binds of `start_sql!` for `run`, after `args`.
pub(super) fn start_args(args: Args, run: &StartRun<'_>, now: i64) -> Args {
    let StartRun {
        id,
        session_key,
        session_id,
        model,
        claim,
        ..
    } = *run;
    let limit: i64 = match claim {
        Some(Claim::All) => -1,
        Some(Claim::Oldest) => 1,
        None => 0,
    };
    args
        // UPDATE
        .bind(now)
        .bind(session_id)
        .bind(model)
        .bind(id)
        // INSERT … SELECT (the claim)
        .bind(session_id)
        .bind(id)
        .bind(now)
        .bind(session_key)
        .bind(id)
        .bind(limit)
        // SELECT (the transcript past the cached part)
        .bind(session_id)
        .bind(run.cached.last().map_or(0, |m| m.seq))
        .bind(id)
}

impl Store {
    /// What the script's `start_sql!` for `run` found (`None` if it did not start it),
    /// with the whole transcript: the cached part, then what the script read, which is
    /// cached in turn.
    pub(super) fn started(
        &self,
        run: &StartRun<'_>,
        rows: &[SqliteRow],
    ) -> Result<Option<Started>> {
        let Some(mut started) = parse_started(rows)? else {
            return Ok(None);
        };
        if !run.cached.is_empty() {
            let read = std::mem::take(&mut started.transcript);
            started.transcript = Vec::with_capacity(run.cached.len() + read.len());
            started.transcript.extend(run.cached.iter().cloned());
            started.transcript.extend(read);
        }
        self.transcripts
            .put(run.session_id, started.transcript.clone());
        Ok(Some(started))
    }
}

/// What a script's `start_sql!` found; `None` if it did not start the run.
fn parse_started(rows: &[SqliteRow]) -> Result<Option<Started>> {
    let mut started = None;
    for r in rows {
        let part: String = r.try_get("part")?;
        match part.as_str() {
            "started" => {
                started.get_or_insert_with(Started::default).started_at =
                    r.try_get("started_at")?;
            }
            "claimed" => started
                .get_or_insert_with(Started::default)
                .claimed
                .push(row_to_claimed(r)?),
            "transcript" => started
                .get_or_insert_with(Started::default)
                .transcript
                .push(row_to_message(r)?),
            _ => {}
        }
    }
    if let Some(s) = &mut started {
        // RETURNING comes in no promised order.
        s.claimed.sort_by_key(|i| i.id);
    }
    Ok(started)
}

impl Store {
    /// Insert a queued run; returns its row (`created_at` read from the clock again).
    pub async fn create_run(&self, run: &NewRun<'_>) -> Result<RunRow> {
        insert_run(&mut *self.writer().await, run).await?;
        Ok(queued_row(run))
    }

    pub async fn get_run(&self, id: &str) -> Result<Option<RunRow>> {
        let r = sqlx::query("SELECT * FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(row_to_run).transpose()
    }

    /// Record progress (steps and usage so far) on a running run.
    pub async fn update_run_usage(
        &self,
        id: &str,
        steps: i64,
        input_tokens: i64,
        output_tokens: i64,
    ) -> Result<()> {
        sqlx::query("UPDATE runs SET steps = ?, input_tokens = ?, output_tokens = ? WHERE id = ?")
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

    /// [`Store::finish_run`], storing the run's last message (its final answer) to the
    /// session `last.0` in the same transaction.
    pub async fn finish_run_with(
        &self,
        id: &str,
        end: &RunEnd,
        last: Option<(&str, &NewMessage)>,
    ) -> Result<RunFinished> {
        let now = now_ms();
        let (last_session, last) = last.unzip();
        // the last message
        let args = bind_message(Args::default().bind(last_session).bind(id), last)?
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
            .bind(crate::outbox::API_CHANNEL)
            // the sub-agent registry and its archive timer
            .bind(super::subagents::outcome_of(end.status))
            .bind(end.error.as_deref())
            .bind(now)
            .bind(end.archive_after_ms.map(|ms| now + ms))
            .bind(id)
            .bind(id);
        let rows = self.conns.write(&FINISH, args).await?;
        let mut finished = None;
        let mut announce = false;
        for r in &rows {
            let part: String = r.try_get("part")?;
            match part.as_str() {
                "run" => finished = Some(r.try_get::<i64, _>("waiting")?),
                _ => announce = true,
            }
        }
        let Some(waiting) = finished else {
            return Err(StoreError::NotFound(format!("run {id}")));
        };
        Ok(RunFinished { waiting, announce })
    }

    /// Start a run, in one transaction (one script, one round trip): mark it running,
    /// move the session's waiting messages into its transcript (`claim`: all of them or
    /// only the oldest; `None` when resuming a run that claimed its messages before a
    /// restart) and read the transcript back. The session id is refreshed (a `/new` may
    /// have replaced it); the model is set unless the run has one.
    ///
    /// `None` when the run is no longer queued or running (it was stopped while it waited).
    pub async fn start_run(
        &self,
        id: &str,
        session_key: &str,
        session_id: &str,
        model: Option<&str>,
        claim: Option<Claim>,
    ) -> Result<Option<Started>> {
        let run = StartRun {
            id,
            session_key,
            session_id,
            model,
            claim,
            cached: self.transcripts.get(session_id),
        };
        let rows = self
            .conns
            .write(&START, start_args(Args::default(), &run, now_ms()))
            .await?;
        self.started(&run, &rows)
    }

    /// Runs that were queued or running when the process stopped.
    pub async fn unfinished_runs(&self) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(
            "SELECT * FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, rowid",
        )
        .fetch_all(&mut *self.reader().await)
        .await?;
        rows.iter().map(row_to_run).collect()
    }

    /// The most recent runs of a session, newest first.
    pub async fn session_runs(&self, session_key: &str, limit: i64) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(
            "SELECT * FROM runs WHERE session_key = ? ORDER BY created_at DESC, rowid DESC LIMIT ?",
        )
        .bind(session_key)
        .bind(limit)
        .fetch_all(&mut *self.reader().await)
        .await?;
        rows.iter().map(row_to_run).collect()
    }
}

impl Store {
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
        sqlx::query(
            "UPDATE runs SET steps = ?, input_tokens = ?, output_tokens = ? WHERE id = ? AND status = 'running'",
        )
        .bind(steps)
        .bind(input_tokens)
        .bind(output_tokens)
        .bind(id)
        .execute(&mut *self.writer().await)
        .await?;
        Ok(())
    }
}

impl Store {
    /// Mark a run cancelled that was taken off its lane before it started (queued, or
    /// `running` but not yet resumed after a restart).
    pub async fn cancel_queued_run(&self, id: &str) -> Result<()> {
        sqlx::query("UPDATE runs SET status = 'cancelled', error = 'stopped before it started', ended_at = ? WHERE id = ? AND status IN ('queued', 'running')")
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
        for id in run_ids {
            sqlx::query("UPDATE runs SET status = 'cancelled', error = ?, ended_at = ? WHERE id = ? AND status IN ('queued', 'running')")
                .bind(error)
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        let rows = sqlx::query("DELETE FROM inbox WHERE session_key = ? RETURNING id")
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
        let rows = sqlx::query(
            "SELECT inbox_id FROM messages WHERE session_id = ? AND run_id = ? AND inbox_id IS NOT NULL ORDER BY seq",
        )
        .bind(&run.session_id)
        .bind(&run.id)
        .fetch_all(&mut *self.reader().await)
        .await?;
        rows.iter().map(|r| Ok(r.try_get("inbox_id")?)).collect()
    }
}
