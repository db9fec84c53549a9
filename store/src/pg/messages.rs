//! Transcript messages on PostgreSQL: appended one by one, read whole or the last N.

use sqlx::Row;

use super::super::messages::decode_message;
use super::super::{now_ms, to_json, MessageRow, NewMessage, Result};
use super::Pg;

impl Pg {
    /// Append one message to a session's transcript; returns its sequence number.
    pub async fn append_message(
        &self,
        session_id: &str,
        run_id: Option<&str>,
        m: &NewMessage,
    ) -> Result<i64> {
        insert_message(&self.pool, session_id, run_id, m).await
    }

    /// The whole transcript of a session, oldest first.
    pub async fn transcript(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        transcript(&self.pool, session_id).await
    }

    /// The last `limit` messages of a session, oldest first.
    pub async fn transcript_tail(&self, session_id: &str, limit: i64) -> Result<Vec<MessageRow>> {
        let rows = sqlx::query(crate::sql::messages::TAIL.pg)
            .bind(session_id)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_message).collect()
    }
}

/// Insert `m` into the transcript of `session_id`; its `seq`.
pub(super) async fn insert_message<'e, E>(
    ex: E,
    session_id: &str,
    run_id: Option<&str>,
    m: &NewMessage,
) -> Result<i64>
where
    E: sqlx::PgExecutor<'e>,
{
    let calls = if m.tool_calls.is_empty() {
        None
    } else {
        Some(to_json(&m.tool_calls)?)
    };
    let r = sqlx::query(crate::sql::messages::INSERT.pg)
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

/// The whole transcript of `session_id`, oldest first.
pub(super) async fn transcript<'e, E>(ex: E, session_id: &str) -> Result<Vec<MessageRow>>
where
    E: sqlx::PgExecutor<'e>,
{
    let rows = sqlx::query(crate::sql::messages::TRANSCRIPT.pg)
        .bind(session_id)
        .fetch_all(ex)
        .await?;
    rows.iter().map(decode_message).collect()
}
