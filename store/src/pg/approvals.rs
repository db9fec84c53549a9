//! Exec approval requests on PostgreSQL (one durable row per tool call, answered from the
//! chat that owns the run) and the executables allowed for good (`allow-always`).

use super::super::approvals::{decode_allow_entry, decode_approval};
use super::super::{
    now_ms, to_json, AllowEntry, ApprovalRow, ApprovalStatus, NewApproval, Result, SessionRow,
};
use super::Pg;

impl Pg {
    /// The request of a tool call: the existing one, else `a` recorded now. The bool says
    /// whether it was created by this call. One statement: the insert's row, else the
    /// row that made it conflict.
    pub async fn request_approval(&self, a: &NewApproval<'_>) -> Result<(ApprovalRow, bool)> {
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(crate::sql::approvals::REQUEST.pg)
            .bind(a.id)
            .bind(a.run_id)
            .bind(a.tool_call_id)
            .bind(a.session_key)
            .bind(a.agent_id)
            .bind(a.label)
            .bind(&a.origin.channel)
            .bind(&a.origin.chat_id)
            .bind(to_json(a.origin)?)
            .bind(a.workdir)
            .bind(a.command)
            .bind(to_json(&a.executables)?)
            .bind(now_ms())
            .bind(a.expires_at)
            .fetch_optional(&mut *tx)
            .await?;
        let (row, created) = match inserted {
            Some(row) => (row, true),
            None => {
                let row = sqlx::query(crate::sql::approvals::OF_CALL.pg)
                    .bind(a.run_id)
                    .bind(a.tool_call_id)
                    .fetch_one(&mut *tx)
                    .await?;
                (row, false)
            }
        };
        tx.commit().await?;
        Ok((decode_approval(&row)?, created))
    }

    pub async fn approval(&self, id: &str) -> Result<Option<ApprovalRow>> {
        let r = sqlx::query(crate::sql::approvals::BY_ID.pg)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_approval).transpose()
    }

    /// The requests of a run's tool calls.
    pub async fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRow>> {
        let rows = sqlx::query(crate::sql::approvals::OF_RUN.pg)
            .bind(run_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_approval).collect()
    }

    /// Answer a pending, unexpired request from its chat; `allow-always` also stores its
    /// executables for its agent, in the same transaction. `None` when nothing changed.
    pub async fn answer_approval(
        &self,
        id: &str,
        channel: &str,
        chat_id: &str,
        status: ApprovalStatus,
        by: &str,
    ) -> Result<Option<ApprovalRow>> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let r = sqlx::query(crate::sql::approvals::ANSWER.pg)
            .bind(status.as_str())
            .bind(by)
            .bind(now)
            .bind(id)
            .bind(channel)
            .bind(chat_id)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = r.as_ref().map(decode_approval).transpose()? else {
            return Ok(None);
        };
        if status == ApprovalStatus::AllowAlways {
            sqlx::query(
                "INSERT INTO exec_allowlist (agent_id, path, approval_id, created_at)
                 SELECT $1, path, $2, $3 FROM UNNEST($4::text[]) AS path
                 ON CONFLICT (agent_id, path) DO NOTHING",
            )
            .bind(&row.agent_id)
            .bind(&row.id)
            .bind(now)
            .bind(&row.executables)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Some(row))
    }

    /// End a pending request without an answer; false if it was no longer pending.
    pub async fn close_approval(&self, id: &str, status: ApprovalStatus) -> Result<bool> {
        let r = sqlx::query(crate::sql::approvals::CLOSE.pg)
            .bind(status.as_str())
            .bind(now_ms())
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Requests still waiting for an answer, oldest first.
    pub async fn pending_approvals(&self) -> Result<Vec<ApprovalRow>> {
        let rows = sqlx::query(crate::sql::approvals::PENDING.pg)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_approval).collect()
    }

    /// The executables `agent_id` may run without asking.
    pub async fn exec_allowed(&self, agent_id: &str) -> Result<Vec<String>> {
        Ok(sqlx::query_scalar(crate::sql::approvals::ALLOWED.pg)
            .bind(agent_id)
            .fetch_all(&self.pool)
            .await?)
    }

    pub async fn exec_allowlist(&self) -> Result<Vec<AllowEntry>> {
        let rows = sqlx::query(crate::sql::approvals::ALLOWLIST.pg)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_allow_entry).collect()
    }

    /// Remove `path` from the stored allowlist (of `agent_id`, or of every agent).
    pub async fn revoke_exec_allowed(&self, path: &str, agent_id: Option<&str>) -> Result<u64> {
        let r = sqlx::query(crate::sql::approvals::REVOKE.pg)
            .bind(path)
            .bind(agent_id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected())
    }

    /// The newest session whose last inbound message came from `channel`/`chat_id`.
    pub async fn session_for_chat(
        &self,
        channel: &str,
        chat_id: &str,
    ) -> Result<Option<SessionRow>> {
        let key: Option<String> = sqlx::query_scalar(
            "SELECT key FROM sessions WHERE origin ->> 'channel' = $1
                 AND origin ->> 'chatId' = $2
             ORDER BY updated_at DESC, seq DESC LIMIT 1",
        )
        .bind(channel)
        .bind(chat_id)
        .fetch_optional(&self.pool)
        .await?;
        match key {
            Some(key) => self.latest_session(&key).await,
            None => Ok(None),
        }
    }
}
