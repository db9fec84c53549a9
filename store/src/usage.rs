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

engine_fns! {
    /// Record the prompt tokens of run `run_id`'s latest model call.
    pub async fn record_context_tokens(&self, run_id: &str, tokens: i64) -> Result<()>;
    /// Record a model call of running run `run_id`: its prompt tokens (the context fill)
    /// and the run's cost so far, priced by the models that served each call.
    pub async fn record_model_call(&self, run_id: &str, tokens: i64, cost_usd: Option<f64>) -> Result<()>;
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
