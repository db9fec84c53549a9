//! Transcript messages: appended one by one as a run produces them.

use sqlx::Row;

use super::super::messages::decode_message;
use super::writer::Args;
use super::{now_ms, to_json, Result, Sqlite};
pub(super) use crate::messages::*;

pub(super) async fn insert_message<'e, E>(
    ex: E,
    session_id: &str,
    run_id: Option<&str>,
    m: &NewMessage,
) -> Result<i64>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    let calls = if m.tool_calls.is_empty() {
        None
    } else {
        Some(to_json(&m.tool_calls)?)
    };
    let r = sqlx::query(crate::sql::messages::INSERT.sqlite)
        .bind(session_id)
        .bind(run_id)
        .bind(m.role.as_str())
        .bind(&m.content)
        .bind(calls)
        .bind(&m.tool_call_id)
        .bind(&m.tool_name)
        .bind(now_ms())
        .fetch_one(ex)
        .await?;
    Ok(r.try_get("seq")?)
}

/// Bind an optional message's columns for a script, in this order: role, content,
/// tool_calls (JSON, NULL when none), tool_call_id, tool_name.
pub(super) fn bind_message(args: Args, m: Option<&NewMessage>) -> Result<Args> {
    let calls = match m {
        Some(m) if !m.tool_calls.is_empty() => Some(to_json(&m.tool_calls)?),
        _ => None,
    };
    Ok(args
        .bind(m.map(|m| m.role.as_str()))
        .bind(m.map(|m| m.content.as_str()))
        .bind(calls)
        .bind(m.and_then(|m| m.tool_call_id.as_deref()))
        .bind(m.and_then(|m| m.tool_name.as_deref())))
}

impl Sqlite {
    /// Append one message to a session's transcript; returns its sequence number.
    pub async fn append_message(
        &self,
        session_id: &str,
        run_id: Option<&str>,
        m: &NewMessage,
    ) -> Result<i64> {
        insert_message(&mut *self.writer().await, session_id, run_id, m).await
    }

    /// The whole transcript of a session, oldest first.
    pub async fn transcript(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        let rows = sqlx::query(crate::sql::messages::TRANSCRIPT.sqlite)
            .bind(session_id)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_message).collect()
    }

    /// The last `limit` messages of a session, oldest first.
    pub async fn transcript_tail(&self, session_id: &str, limit: i64) -> Result<Vec<MessageRow>> {
        let rows = sqlx::query(crate::sql::messages::TAIL.sqlite)
            .bind(session_id)
            .bind(limit)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_message).collect()
    }
}
