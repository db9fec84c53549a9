//! The API's answers (and the CLI's `--json` output of store rows) as view structs: the
//! public JSON shapes, written out field by field from store rows, which do not serialize,
//! so a column rename cannot change the API. An API answer (`error::Json`) has its keys
//! in alphabetical order; the transcript's lines and `pairing approve --json` in
//! declaration order. The answers around these rows are in `answers.rs`.

use serde::Serialize;
use switchboard_channels::Origin;

use crate::config::CronJobConfig;
use crate::store::{
    CronJobRow, MessageRow, PairingRow, RunRow, SessionRow, SubagentRow, ToolCallRecord,
};

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

/// A run as `GET /api/runs/{id}` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    pub id: String,
    pub session_key: String,
    pub session_id: String,
    pub agent_id: String,
    pub lane: String,
    pub claim_all: bool,
    pub status: &'static str,
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

impl From<RunRow> for RunView {
    fn from(r: RunRow) -> RunView {
        RunView {
            id: r.id,
            session_key: r.session_key,
            session_id: r.session_id,
            agent_id: r.agent_id,
            lane: r.lane,
            claim_all: r.claim_all,
            status: r.status.as_str(),
            origin: r.origin,
            model: r.model,
            error: r.error,
            steps: r.steps,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cost_usd: r.cost_usd,
            reply: r.reply,
            created_at: r.created_at,
            started_at: r.started_at,
            ended_at: r.ended_at,
            timeout_ms: r.timeout_ms,
        }
    }
}

/// A transcript line (`GET /api/sessions/{key}/transcript`): absent fields are left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageView<'a> {
    pub seq: i64,
    pub session_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<&'a str>,
    pub role: &'static str,
    pub content: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<&'a str>,
    pub created_at: i64,
}

/// A compaction among the transcript's lines (`?compactions=true`): the summary that
/// stands for every message up to `throughSeq`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionView<'a> {
    pub role: &'static str,
    pub session_id: &'a str,
    pub through_seq: i64,
    pub content: &'a str,
    pub replaced: i64,
    pub tokens_before: i64,
    pub tokens_after: i64,
    pub created_at: i64,
}

impl<'a> From<&'a crate::store::CompactionRow> for CompactionView<'a> {
    fn from(c: &'a crate::store::CompactionRow) -> CompactionView<'a> {
        CompactionView {
            role: "compaction",
            session_id: &c.session_id,
            through_seq: c.through_seq,
            content: &c.summary,
            replaced: c.replaced,
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            created_at: c.created_at,
        }
    }
}

/// A tool call on an assistant message of the transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCallView<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// The raw JSON text of the arguments, as the model sent it.
    pub arguments: &'a str,
}

impl<'a> From<&'a MessageRow> for MessageView<'a> {
    fn from(m: &'a MessageRow) -> MessageView<'a> {
        MessageView {
            seq: m.seq,
            session_id: &m.session_id,
            run_id: m.run_id.as_deref(),
            role: m.role.as_str(),
            content: &m.content,
            tool_calls: m.tool_calls.iter().map(ToolCallView::from).collect(),
            tool_call_id: m.tool_call_id.as_deref(),
            tool_name: m.tool_name.as_deref(),
            created_at: m.created_at,
        }
    }
}

impl<'a> From<&'a ToolCallRecord> for ToolCallView<'a> {
    fn from(c: &'a ToolCallRecord) -> ToolCallView<'a> {
        ToolCallView {
            id: &c.id,
            name: &c.name,
            arguments: &c.arguments,
        }
    }
}

/// A pairing as `switchboard pairing … --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairingView<'a> {
    pub channel: &'a str,
    pub sender_id: &'a str,
    pub sender_name: Option<&'a str>,
    pub code: &'a str,
    pub status: &'a str,
    pub created_at: i64,
    pub approved_at: Option<i64>,
}

impl<'a> From<&'a PairingRow> for PairingView<'a> {
    fn from(p: &'a PairingRow) -> PairingView<'a> {
        PairingView {
            channel: &p.channel,
            sender_id: &p.sender_id,
            sender_name: p.sender_name.as_deref(),
            code: &p.code,
            status: &p.status,
            created_at: p.created_at,
            approved_at: p.approved_at,
        }
    }
}

/// A session as `GET /api/sessions` lists it (`running`: its active run, if any).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub session_key: String,
    pub session_id: String,
    pub agent_id: String,
    pub status: &'static str,
    pub origin: Option<Origin>,
    pub created_at: i64,
    pub updated_at: i64,
    pub archived_at: Option<i64>,
    pub running: Option<String>,
}

impl SessionView {
    /// `s` with `running`, the id of its active run.
    pub fn new(s: &SessionRow, running: Option<String>) -> SessionView {
        SessionView {
            session_key: s.key.clone(),
            session_id: s.id.clone(),
            agent_id: s.agent_id.clone(),
            status: s.status.as_str(),
            origin: s.origin.clone(),
            created_at: s.created_at,
            updated_at: s.updated_at,
            archived_at: s.archived_at,
            running,
        }
    }
}

/// A scheduled job as `/api/cron` shows it (`job`: as written in `cron.jobs[]`;
/// `summary`: its schedule in words).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJobView {
    pub id: String,
    pub source: &'static str,
    pub job: CronJobConfig,
    pub enabled: bool,
    pub next_run_at: Option<i64>,
    pub last_run_at: Option<i64>,
    pub runs: i64,
    pub skipped: i64,
    pub summary: String,
}

impl From<&CronJobRow> for CronJobView {
    fn from(j: &CronJobRow) -> CronJobView {
        CronJobView {
            id: j.id.clone(),
            source: j.source.as_str(),
            job: j.spec.clone(),
            enabled: j.enabled,
            next_run_at: j.next_run_at,
            last_run_at: j.last_run_at,
            runs: j.runs,
            skipped: j.skipped,
            summary: crate::cron::jobs::describe(j),
        }
    }
}

#[cfg(test)]
#[path = "views_tests.rs"]
mod tests;
