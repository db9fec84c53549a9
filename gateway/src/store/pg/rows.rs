//! Rows read back from PostgreSQL into the store's row types. Every time is a `BIGINT` of
//! unix ms, every count a `BIGINT`, JSON a `TEXT` the store parses itself (`sessions.origin`
//! is `JSONB`, so queries read it as `origin::text`, see [`SESSION_COLUMNS`]).

use sqlx::postgres::PgRow;
use sqlx::Row;

use super::super::{
    from_json, InboxItem, MessageRow, Result, Role, RunRow, RunStatus, SessionRow, SessionStatus,
};

/// The columns of `sessions` as [`session`] reads them (`origin` as text).
pub(super) const SESSION_COLUMNS: &str =
    "id, key, agent_id, origin::text AS origin, status, created_at, updated_at, archived_at";

pub(super) fn session(r: &PgRow) -> Result<SessionRow> {
    let origin: Option<String> = r.try_get("origin")?;
    Ok(SessionRow {
        id: r.try_get("id")?,
        key: r.try_get("key")?,
        agent_id: r.try_get("agent_id")?,
        origin: origin.as_deref().map(from_json).transpose()?,
        status: SessionStatus::parse(r.try_get("status")?)?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        archived_at: r.try_get("archived_at")?,
    })
}

pub(super) fn message(r: &PgRow) -> Result<MessageRow> {
    let role: String = r.try_get("role")?;
    let calls: Option<String> = r.try_get("tool_calls")?;
    Ok(MessageRow {
        seq: r.try_get("seq")?,
        session_id: r.try_get("session_id")?,
        run_id: r.try_get("run_id")?,
        role: Role::parse(&role)?,
        content: r.try_get("content")?,
        tool_calls: calls
            .as_deref()
            .map(from_json)
            .transpose()?
            .unwrap_or_default(),
        tool_call_id: r.try_get("tool_call_id")?,
        tool_name: r.try_get("tool_name")?,
        created_at: r.try_get("created_at")?,
    })
}

/// A message a claim moved into the transcript, from the claim's `RETURNING inbox_id,
/// origin, sender_id, content`.
pub(super) fn claimed(r: &PgRow) -> Result<InboxItem> {
    let origin: String = r.try_get("origin")?;
    Ok(InboxItem {
        id: r.try_get("inbox_id")?,
        origin: from_json(&origin)?,
        sender_id: r.try_get("sender_id")?,
        text: r.try_get("content")?,
    })
}

pub(super) fn run(r: &PgRow) -> Result<RunRow> {
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
