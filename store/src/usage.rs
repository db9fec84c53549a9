//! What runs used and cost, read back from the `runs` rows (so it survives restarts and
//! covers every process of a shared database): a session's totals, an agent's (or every
//! agent's) totals since a moment, and the prompt tokens of a session's latest model
//! call — how full the model's context window was (both engines).

use super::engine::engine_fns;
use super::Result;

/// Tokens and cost of a set of runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageTotals {
    pub runs: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Sum of the runs' estimated costs; `None` when no run had a priced model.
    pub cost_usd: Option<f64>,
}

/// What a running run has used, recorded after each model call whose answer it acts on
/// (a final answer's goes with the run's end).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CallUsage {
    /// The run's steps so far.
    pub steps: i64,
    /// The run's tokens so far.
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// The call's prompt tokens: how full the context window was.
    pub context_tokens: i64,
    /// The run's cost so far, each call priced by the model that served it; `None` while
    /// no call had a priced model.
    pub cost_usd: Option<f64>,
}

engine_fns! {
    /// Record a model call of running run `run_id` (an ended run keeps what its end
    /// recorded): one statement.
    pub async fn record_model_call(&self, run_id: &str, usage: &CallUsage) -> Result<()>;
    /// Record a model call whose answer the run acts on (its tool calls): the usage (as
    /// [`Store::record_model_call`]) and the answer appended to session `session_id`'s
    /// transcript; returns the message's sequence number. One transaction on SQLite.
    pub async fn record_call_answer(&self, run_id: &str, session_id: &str, usage: &CallUsage, answer: &crate::NewMessage) -> Result<i64>;
    /// The totals of session `session_id` (of `session_key`)'s runs per model that served them (a run's
    /// model is the one that served its last call), most expensive first.
    pub async fn session_usage_by_model(&self, session_key: &str, session_id: &str) -> Result<Vec<(String, UsageTotals)>>;
    /// The totals of session `session_id`'s runs.
    pub async fn session_usage(&self, session_key: &str, session_id: &str) -> Result<UsageTotals>;
    /// The prompt tokens of the latest model call of session `session_id`, if it made one.
    pub async fn session_context_tokens(&self, session_key: &str, session_id: &str) -> Result<Option<i64>>;
    /// The totals of the runs created at or after `since_ms`: agent `agent_id`'s, or every
    /// agent's (`None`).
    pub async fn usage_since(&self, agent_id: Option<&str>, since_ms: i64) -> Result<UsageTotals>;
}

/// Totals from a row of `runs`, `input_tokens`, `output_tokens`, `cost_usd`.
pub(super) fn decode_totals(r: &impl super::decode::Columns) -> Result<UsageTotals> {
    Ok(UsageTotals {
        runs: r.int("runs")?,
        input_tokens: r.int("input_tokens")?,
        output_tokens: r.int("output_tokens")?,
        cost_usd: r.opt_real("cost_usd")?,
    })
}
