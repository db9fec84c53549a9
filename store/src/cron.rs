//! Scheduled jobs: their rows and a due job's message (both engines).

use super::{Result, StoreError};
use switchboard_channels::Origin;

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;

/// A job's definition as the store keeps it: a JSON document of which the store reads
/// only the id and whether it was written enabled. The gateway's is its config type
/// (`cron.jobs[]`); the store never depends on it.
pub trait JobSpec: serde::Serialize + serde::de::DeserializeOwned + Send + Sync {
    /// The job's id (the row's key).
    fn id(&self) -> &str;
    /// Whether the job is enabled as written (the row's `enabled` until changed).
    fn enabled(&self) -> bool;
}

/// Who added a job: a reload replaces or removes only the config's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobSource {
    Config,
    Tool,
    Cli,
}

impl JobSource {
    pub fn as_str(self) -> &'static str {
        match self {
            JobSource::Config => "config",
            JobSource::Tool => "tool",
            JobSource::Cli => "cli",
        }
    }

    pub fn parse(s: &str) -> Result<JobSource> {
        Ok(match s {
            "config" => JobSource::Config,
            "tool" => JobSource::Tool,
            "cli" => JobSource::Cli,
            other => return Err(StoreError::Corrupt(format!("unknown job source {other:?}"))),
        })
    }
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct CronJobRow<S> {
    pub id: String,
    pub source: JobSource,
    /// The job's definition (its `enabled` is the one written; [`Self::enabled`] is in force).
    pub spec: S,
    pub enabled: bool,
    pub next_run_at: Option<i64>,
    pub last_run_at: Option<i64>,
    pub last_inbox_id: Option<i64>,
    pub runs: i64,
    pub skipped: i64,
}

/// A `cron_jobs` row, from either engine (`enabled` is 0/1 on SQLite, `BOOLEAN` on
/// PostgreSQL; both decode to a `bool`).
pub(super) fn decode_cron_job<S: JobSpec>(r: &impl Columns) -> Result<CronJobRow<S>> {
    Ok(CronJobRow {
        id: r.string("id")?,
        source: JobSource::parse(r.text("source")?)?,
        spec: from_json(r.text("spec")?)?,
        enabled: r.boolean("enabled")?,
        next_run_at: r.opt_int("next_run_at")?,
        last_run_at: r.opt_int("last_run_at")?,
        last_inbox_id: r.opt_int("last_inbox_id")?,
        runs: r.int("runs")?,
        skipped: r.int("skipped")?,
    })
}

/// A due job's message (see [`Store::fire_cron_job`]).
pub struct CronFire<'a> {
    pub job_id: &'a str,
    pub session_key: &'a str,
    pub origin: &'a Origin,
    pub sender_id: &'a str,
    pub text: &'a str,
    /// The job's next time from now on (`None`: never again).
    pub next_run_at: Option<i64>,
    /// A one-shot that ran: disabled.
    pub disable: bool,
    /// A scheduled firing: the job's next time as the scheduler read it. The firing is
    /// recorded only while the job's next time is still that, so a due time fired by
    /// another process meanwhile (a cron handover in shared mode) is not fired again.
    /// `None`: a manual run, never refused.
    pub due_at: Option<i64>,
}

engine_fns! {
    pub async fn cron_jobs<S: JobSpec>(&self) -> Result<Vec<CronJobRow<S>>>;
    pub async fn cron_job<S: JobSpec>(&self, id: &str) -> Result<Option<CronJobRow<S>>>;
    /// Enabled jobs whose next time is at or before `now`, soonest first.
    pub async fn due_cron_jobs<S: JobSpec>(&self, now: i64) -> Result<Vec<CronJobRow<S>>>;
    /// The soonest next time of an enabled job.
    pub async fn next_cron_due(&self) -> Result<Option<i64>>;
    /// Add a job; `false` when a job with its id exists.
    pub async fn insert_cron_job<S: JobSpec>(&self, spec: &S, source: JobSource, next_run_at: Option<i64>) -> Result<bool>;
    /// Bring the config's jobs in: `upsert` (job, next time) replaces a job of that id
    /// (its counters and last run kept), and config jobs whose id is not in `keep` go.
    /// Jobs added by the tool or the CLI are never removed here. One transaction.
    pub async fn sync_config_cron_jobs<S: JobSpec>(&self, upsert: &[(&S, Option<i64>)], keep: &[&str]) -> Result<u64>;
    /// Remove a job; whether there was one.
    pub async fn delete_cron_job(&self, id: &str) -> Result<bool>;
    /// Enable (with its next time) or disable a job; whether there was one.
    pub async fn set_cron_job_enabled(&self, id: &str, enabled: bool, next_run_at: Option<i64>) -> Result<bool>;
    /// Whether the job's last message is still waiting or its run unfinished.
    pub async fn cron_job_in_flight(&self, last_inbox_id: i64) -> Result<bool>;
    /// A due job came due while still running: skipped, its next time moved on.
    pub async fn skip_cron_job(&self, id: &str, next_run_at: Option<i64>) -> Result<()>;
    /// Queue a job's message and record the run (next time, last run, a one-shot
    /// disabled), in one transaction. Returns the message's inbox id; `None`, with nothing
    /// written, when the job's next time is no longer `fire.due_at` (fired already).
    pub async fn fire_cron_job(&self, fire: &CronFire<'_>) -> Result<Option<i64>>;
}
