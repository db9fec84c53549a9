//! Runs: a run's row, a run to queue, how one ended and what its end left behind (both
//! engines).

use switchboard_channels::Origin;

pub use super::states::RunStatus;

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;
use super::messages::NewMessage;
use super::now_ms;
use super::Result;

#[derive(Debug, Clone, PartialEq)]
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

/// A `runs` row, from either engine.
pub(super) fn decode_run(r: &impl Columns) -> Result<RunRow> {
    Ok(RunRow {
        id: r.string("id")?,
        session_key: r.string("session_key")?,
        session_id: r.string("session_id")?,
        agent_id: r.string("agent_id")?,
        lane: r.string("lane")?,
        claim_all: r.text("claim")? == claim_text(true),
        status: RunStatus::parse(r.text("status")?)?,
        origin: r.opt_text("origin")?.map(from_json).transpose()?,
        model: r.opt_string("model")?,
        error: r.opt_string("error")?,
        steps: r.int("steps")?,
        input_tokens: r.int("input_tokens")?,
        output_tokens: r.int("output_tokens")?,
        cost_usd: r.opt_real("cost_usd")?,
        reply: r.opt_string("reply")?,
        created_at: r.int("created_at")?,
        started_at: r.opt_int("started_at")?,
        ended_at: r.opt_int("ended_at")?,
        timeout_ms: r.opt_int("timeout_ms")?,
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

/// The stored `runs.claim` of a run that claims every waiting message (`claim_all`) or
/// only the oldest: what both engines write and [`decode_run`] reads back.
pub(crate) fn claim_text(claim_all: bool) -> &'static str {
    if claim_all {
        "all"
    } else {
        "one"
    }
}

impl NewRun<'_> {
    /// What the run takes from the inbox when it starts.
    pub fn claim(&self) -> super::Claim {
        if self.claim_all {
            super::Claim::All
        } else {
            super::Claim::Oldest
        }
    }
}

/// The row of a run just inserted by [`insert_run`].
pub(crate) fn queued_row(run: &NewRun<'_>) -> RunRow {
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
            context_tokens: None,
            reply: None,
            deliver: None,
            archive_after_ms: None,
            drop_inbox: false,
        }
    }
}

/// What ending a run left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunFinished {
    /// Messages waiting in the session's inbox (for a run still to be queued).
    pub waiting: i64,
    /// The run was a sub-agent's, and its end was recorded now: its announce is pending.
    pub announce: bool,
    /// A reply was queued in the outbox (not for an HTTP API caller, who reads the run):
    /// the outbox worker has something to send.
    pub reply_queued: bool,
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
    /// The prompt tokens of the run's last model call, when the end records them (else
    /// what the run recorded stays).
    pub context_tokens: Option<i64>,
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

engine_fns! {
    /// Insert a queued run; returns its row (`created_at` read from the clock again).
    pub async fn create_run(&self, run: &NewRun<'_>) -> Result<RunRow>;
    pub async fn get_run(&self, id: &str) -> Result<Option<RunRow>>;
    /// Record progress (steps and usage so far) on a running run (an ended run keeps what
    /// its end recorded).
    pub async fn update_run_usage(&self, id: &str, steps: i64, input_tokens: i64, output_tokens: i64) -> Result<()>;
    /// End a run that is still queued or running and, in the same transaction, queue its
    /// reply for delivery. `NotFound` when there is no such run or it had ended already.
    pub async fn finish_run(&self, id: &str, end: &RunEnd) -> Result<RunFinished>;
    /// [`Store::finish_run`], storing the run's last message (its final answer) to the
    /// session `last.0` in the same transaction.
    pub async fn finish_run_with(&self, id: &str, end: &RunEnd, last: Option<(&str, &NewMessage)>) -> Result<RunFinished>;
    /// Runs that were queued or running when the process stopped.
    pub async fn unfinished_runs(&self) -> Result<Vec<RunRow>>;
    /// The unfinished runs this process should run now, oldest first: every unfinished
    /// run where one process acts (SQLite, standby mode); in shared mode those whose lease
    /// expired (their process died) or that nobody leased, each now leased to this process
    /// — a running one only while no other run of its session runs under a live lease.
    pub async fn take_over_runs(&self) -> Result<Vec<RunRow>>;
    /// The most recent runs of a session, newest first.
    pub async fn session_runs(&self, session_key: &str, limit: i64) -> Result<Vec<RunRow>>;
    /// Each running run, whichever process runs it: its session key and id.
    pub async fn running_runs(&self) -> Result<Vec<(String, String)>>;
}
