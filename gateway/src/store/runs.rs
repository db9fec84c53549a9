//! Runs: one agent turn (or sub-agent run) each, with its lifecycle and usage.
//! Ending a run and queueing its reply in the outbox happen in one transaction.

use serde::Serialize;
use sqlx::Row;
use switchboard_channels::Origin;

use super::outbox::{insert_outbox, NewOutbox};
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
    /// Text to deliver to the run's origin through the outbox (key `run:<id>:reply`).
    pub deliver: Option<String>,
    /// For a sub-agent's spawn run: archive its session this long after it ends (None = never).
    pub archive_after_ms: Option<i64>,
}

impl Store {
    pub async fn create_run(&self, run: &NewRun<'_>) -> Result<()> {
        insert_run(&self.writer, run).await
    }

    pub async fn get_run(&self, id: &str) -> Result<Option<RunRow>> {
        let r = sqlx::query("SELECT * FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(row_to_run).transpose()
    }

    /// Mark a queued run running. The session id is refreshed (a `/new` may have replaced it).
    pub async fn start_run(&self, id: &str, session_id: &str, model: Option<&str>) -> Result<()> {
        sqlx::query("UPDATE runs SET status = 'running', started_at = ?, session_id = ?, model = COALESCE(model, ?) WHERE id = ?")
            .bind(now_ms())
            .bind(session_id)
            .bind(model)
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
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
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// End a run and, in the same transaction, queue its reply for delivery.
    pub async fn finish_run(&self, id: &str, end: &RunEnd) -> Result<()> {
        let mut tx = self.begin_write().await?;
        let r = sqlx::query(
            "UPDATE runs SET status = ?, error = ?, model = COALESCE(?, model), steps = ?, input_tokens = ?,
                 output_tokens = ?, cost_usd = ?, reply = ?, ended_at = ?
             WHERE id = ? RETURNING origin",
        )
        .bind(end.status.as_str())
        .bind(&end.error)
        .bind(&end.model)
        .bind(end.steps)
        .bind(end.input_tokens)
        .bind(end.output_tokens)
        .bind(end.cost_usd)
        .bind(&end.reply)
        .bind(now_ms())
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(r) = r else {
            return Err(StoreError::NotFound(format!("run {id}")));
        };
        let origin: Option<String> = r.try_get("origin")?;
        if let (Some(text), Some(origin)) = (&end.deliver, origin) {
            let origin: Origin = from_json(&origin)?;
            insert_outbox(
                &mut *tx,
                &NewOutbox {
                    key: &format!("run:{id}:reply"),
                    origin: &origin,
                    text,
                },
            )
            .await?;
        }
        super::subagents::record_child_end(&mut tx, id, end).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Runs that were queued or running when the process stopped.
    pub async fn unfinished_runs(&self) -> Result<Vec<RunRow>> {
        let rows = sqlx::query(
            "SELECT * FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, rowid",
        )
        .fetch_all(&self.pool)
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
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(row_to_run).collect()
    }
}

impl Store {
    /// Put a running run back to `queued` (shutdown checkpoint): it resumes from its
    /// transcript at the next start.
    pub async fn requeue_run(&self, id: &str) -> Result<()> {
        sqlx::query("UPDATE runs SET status = 'queued' WHERE id = ? AND status = 'running'")
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }
}

impl Store {
    /// Mark a queued run cancelled (it was removed from its lane before it started).
    pub async fn cancel_queued_run(&self, id: &str) -> Result<()> {
        sqlx::query("UPDATE runs SET status = 'cancelled', error = 'stopped before it started', ended_at = ? WHERE id = ? AND status = 'queued'")
            .bind(now_ms())
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }
}
