//! The sub-agent registry's rows and a spawn (both engines).

use switchboard_channels::Origin;

pub use super::states::{AnnounceState, Cleanup, Outcome};

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;
use super::runs::RunRow;
use super::states::RunStatus;
use super::Result;

#[derive(Debug, Clone, PartialEq)]
pub struct SubagentRow {
    pub run_id: String,
    pub child_session_key: String,
    pub requester_session_key: String,
    pub requester_run_id: Option<String>,
    pub requester_origin: Option<Origin>,
    pub task: String,
    pub label: Option<String>,
    pub agent_id: String,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub cleanup: Cleanup,
    pub run_timeout_seconds: i64,
    /// The requester's `task` tool call that created this child (`None`: a
    /// `sessions_spawn` child, which announces to the chat).
    pub task_call_id: Option<String>,
    pub created_at: i64,
    pub ended_at: Option<i64>,
    pub outcome: Option<Outcome>,
    pub error: Option<String>,
    pub stop_note: Option<String>,
    pub announce_state: AnnounceState,
    pub announce_attempts: i64,
    pub archive_at: Option<i64>,
    pub archived_at: Option<i64>,
    /// From the child's run row.
    pub status: RunStatus,
    pub started_at: Option<i64>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_usd: Option<f64>,
    pub session_id: String,
}

/// A `subagent_runs` row joined with its child's `runs` row, from either engine.
pub(super) fn decode_subagent(r: &impl Columns) -> Result<SubagentRow> {
    Ok(SubagentRow {
        run_id: r.string("run_id")?,
        child_session_key: r.string("child_session_key")?,
        requester_session_key: r.string("requester_session_key")?,
        requester_run_id: r.opt_string("requester_run_id")?,
        requester_origin: r.opt_text("requester_origin")?.map(from_json).transpose()?,
        task: r.string("task")?,
        label: r.opt_string("label")?,
        agent_id: r.string("agent_id")?,
        model: r.opt_string("model")?,
        thinking: r.opt_string("thinking")?,
        cleanup: Cleanup::parse(r.text("cleanup")?)?,
        run_timeout_seconds: r.int("run_timeout_seconds")?,
        task_call_id: r.opt_string("task_call_id")?,
        created_at: r.int("created_at")?,
        ended_at: r.opt_int("ended_at")?,
        outcome: r.opt_text("outcome")?.map(Outcome::parse).transpose()?,
        error: r.opt_string("error")?,
        stop_note: r.opt_string("stop_note")?,
        announce_state: AnnounceState::parse(r.text("announce_state")?)?,
        announce_attempts: r.int("announce_attempts")?,
        archive_at: r.opt_int("archive_at")?,
        archived_at: r.opt_int("archived_at")?,
        status: RunStatus::parse(r.text("status")?)?,
        started_at: r.opt_int("started_at")?,
        input_tokens: r.int("input_tokens")?,
        output_tokens: r.int("output_tokens")?,
        cost_usd: r.opt_real("cost_usd")?,
        session_id: r.string("session_id")?,
    })
}

/// Everything a spawn writes, in one transaction.
pub struct NewSubagent<'a> {
    pub run_id: &'a str,
    pub child_session_key: &'a str,
    pub child_session_id: &'a str,
    pub requester_session_key: &'a str,
    pub requester_run_id: Option<&'a str>,
    pub requester_origin: Option<&'a Origin>,
    pub task: &'a str,
    pub label: Option<&'a str>,
    pub agent_id: &'a str,
    pub model: Option<&'a str>,
    pub thinking: Option<&'a str>,
    pub cleanup: Cleanup,
    pub run_timeout_seconds: i64,
    /// The requester's `task` tool call creating this child (with `requester_run_id`).
    pub task_call_id: Option<&'a str>,
}

#[cfg(any(test, feature = "test-hooks"))]
impl<'a> NewSubagent<'a> {
    /// A spawn from `agent:main:main` for tests: task "look", agent `main`, no label,
    /// model or timeout, `cleanup: "keep"`.
    pub fn fixture(run_id: &'a str, child_key: &'a str, child_session_id: &'a str) -> Self {
        NewSubagent {
            run_id,
            child_session_key: child_key,
            child_session_id,
            requester_session_key: "agent:main:main",
            requester_run_id: None,
            requester_origin: None,
            task: "look",
            label: None,
            agent_id: "main",
            model: None,
            thinking: None,
            cleanup: Cleanup::Keep,
            run_timeout_seconds: 0,
            task_call_id: None,
        }
    }
}

/// The channel of messages passed between sessions (a spawn's task, `/subagents send`):
/// no chat, so nothing is ever delivered to it.
pub const INTERNAL_CHANNEL: &str = "internal";

engine_fns! {
    /// Register a spawn: child session, registry row, run row and the task as the child's
    /// first message, all committed together before the run is queued.
    pub async fn create_subagent(&self, s: &NewSubagent<'_>, timeout_ms: Option<i64>) -> Result<RunRow>;
    pub async fn subagent(&self, run_id: &str) -> Result<Option<SubagentRow>>;
    /// The sub-agent whose child session is `key`, if any.
    pub async fn subagent_by_child(&self, key: &str) -> Result<Option<SubagentRow>>;
    /// The child a `task` tool call (`call_id` of the requester's run `run_id`) created, if
    /// any: a resumed requester waits for it instead of creating another.
    pub async fn task_child(&self, run_id: &str, call_id: &str) -> Result<Option<SubagentRow>>;
    /// Children spawned from `requester`, newest first.
    pub async fn subagents_of(&self, requester: &str, limit: i64) -> Result<Vec<SubagentRow>>;
    /// All sub-agents, newest first.
    pub async fn all_subagents(&self, limit: i64) -> Result<Vec<SubagentRow>>;
    /// Sub-agents whose run ended and whose announce is not yet queued.
    pub async fn pending_announces(&self) -> Result<Vec<SubagentRow>>;
    /// [`Store::pending_announces`] that no live process works on: no unexpired
    /// `announce:<run id>` lease (shared mode's takeover pass).
    pub async fn orphaned_announces(&self) -> Result<Vec<SubagentRow>>;
    /// Who stopped a child, for its announce's Notes (set before the cancel fires).
    pub async fn set_stop_note(&self, run_id: &str, note: &str) -> Result<()>;
    /// The earliest timer: (id, kind, target, due_at).
    pub async fn next_timer(&self) -> Result<Option<(i64, String, String, i64)>>;
    /// Fire an archive timer: drop the timer, archive the session and stamp the registry,
    /// in one transaction; false (nothing done) when the timer was fired already — by
    /// another process, in shared mode.
    pub async fn fire_archive_timer(&self, timer_id: i64, session_key: &str) -> Result<bool>;
}
