//! The API's answers as view structs: the public JSON shapes, written out field by field
//! from store rows (which do not serialize, so a column rename cannot change the API).

use serde::Serialize;
use switchboard_channels::Origin;

use crate::store::SubagentRow;

/// A sub-agent run as `/api/subagents` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentView {
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
    pub cleanup: &'static str,
    pub run_timeout_seconds: i64,
    pub created_at: i64,
    pub ended_at: Option<i64>,
    pub outcome: Option<&'static str>,
    pub error: Option<String>,
    pub stop_note: Option<String>,
    pub announce_state: &'static str,
    pub announce_attempts: i64,
    pub archive_at: Option<i64>,
    pub archived_at: Option<i64>,
    /// The child's run status.
    pub status: &'static str,
    pub started_at: Option<i64>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cost_usd: Option<f64>,
    pub session_id: String,
}

impl From<SubagentRow> for SubagentView {
    fn from(r: SubagentRow) -> SubagentView {
        SubagentView {
            run_id: r.run_id,
            child_session_key: r.child_session_key,
            requester_session_key: r.requester_session_key,
            requester_run_id: r.requester_run_id,
            requester_origin: r.requester_origin,
            task: r.task,
            label: r.label,
            agent_id: r.agent_id,
            model: r.model,
            thinking: r.thinking,
            cleanup: r.cleanup.as_str(),
            run_timeout_seconds: r.run_timeout_seconds,
            created_at: r.created_at,
            ended_at: r.ended_at,
            outcome: r.outcome.map(|o| o.as_str()),
            error: r.error,
            stop_note: r.stop_note,
            announce_state: r.announce_state.as_str(),
            announce_attempts: r.announce_attempts,
            archive_at: r.archive_at,
            archived_at: r.archived_at,
            status: r.status.as_str(),
            started_at: r.started_at,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cost_usd: r.cost_usd,
            session_id: r.session_id,
        }
    }
}
