//! Exec approval requests (one durable row per tool call, answered from the chat that
//! owns the run) and the executables allowed for good (`allow-always`).

use sqlx::Row;

use super::super::approvals::{decode_allow_entry, decode_approval};
use super::{begin_write, now_ms, to_json, Result, Sqlite};
pub(super) use crate::approvals::*;
use crate::sessions::SessionRow;

impl Sqlite {
    /// The request of a tool call: the existing one (a resumed run re-executing the call),
    /// else `a` recorded now. The bool says whether it was created by this call.
    pub async fn request_approval(&self, a: &NewApproval<'_>) -> Result<(ApprovalRow, bool)> {
        let mut w = self.writer().await;
        let mut tx = begin_write(&mut w).await?;
        let inserted = sqlx::query(crate::sql::approvals::REQUEST.sqlite)
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
                let row = sqlx::query(crate::sql::approvals::OF_CALL.sqlite)
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
        let r = sqlx::query(crate::sql::approvals::BY_ID.sqlite)
            .bind(id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_approval).transpose()
    }

    /// The requests of a run's tool calls (to find the calls a resumed run re-executes).
    pub async fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRow>> {
        let rows = sqlx::query(crate::sql::approvals::OF_RUN.sqlite)
            .bind(run_id)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_approval).collect()
    }

    /// Answer a pending request from the chat `channel`/`chat_id`: `None` when there is
    /// no pending, unexpired request with that id for that chat (nothing changes then).
    /// `allow-always` also stores the request's executables for its agent, in the same
    /// transaction.
    pub async fn answer_approval(
        &self,
        id: &str,
        channel: &str,
        chat_id: &str,
        status: ApprovalStatus,
        by: &str,
    ) -> Result<Option<ApprovalRow>> {
        let now = now_ms();
        let mut w = self.writer().await;
        let mut tx = begin_write(&mut w).await?;
        let r = sqlx::query(crate::sql::approvals::ANSWER.sqlite)
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
            for path in &row.executables {
                sqlx::query(
                    "INSERT INTO exec_allowlist (agent_id, path, approval_id, created_at)
                     VALUES (?, ?, ?, ?) ON CONFLICT(agent_id, path) DO NOTHING",
                )
                .bind(&row.agent_id)
                .bind(path)
                .bind(&row.id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(Some(row))
    }

    /// End a pending request without an answer (`cancelled`, `expired`); false if it was
    /// no longer pending.
    pub async fn close_approval(&self, id: &str, status: ApprovalStatus) -> Result<bool> {
        let r = sqlx::query(crate::sql::approvals::CLOSE.sqlite)
            .bind(status.as_str())
            .bind(now_ms())
            .bind(id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected() == 1)
    }

    /// Requests still waiting for an answer, oldest first.
    pub async fn pending_approvals(&self) -> Result<Vec<ApprovalRow>> {
        let rows = sqlx::query(crate::sql::approvals::PENDING.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_approval).collect()
    }

    /// The executables `agent_id` may run without asking (from `allow-always`).
    pub async fn exec_allowed(&self, agent_id: &str) -> Result<Vec<String>> {
        let rows = sqlx::query(crate::sql::approvals::ALLOWED.sqlite)
            .bind(agent_id)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(|r| Ok(r.try_get("path")?)).collect()
    }

    pub async fn exec_allowlist(&self) -> Result<Vec<AllowEntry>> {
        let rows = sqlx::query(crate::sql::approvals::ALLOWLIST.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_allow_entry).collect()
    }

    /// Remove `path` from the stored allowlist (of `agent_id`, or of every agent);
    /// returns how many entries went.
    pub async fn revoke_exec_allowed(&self, path: &str, agent_id: Option<&str>) -> Result<u64> {
        let r = sqlx::query(crate::sql::approvals::REVOKE.sqlite)
            .bind(path)
            .bind(agent_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(r.rows_affected())
    }

    /// The newest session whose last inbound message came from `channel`/`chat_id` (the
    /// chats the `message` tool may write to).
    pub async fn session_for_chat(
        &self,
        channel: &str,
        chat_id: &str,
    ) -> Result<Option<SessionRow>> {
        let r = sqlx::query(
            "SELECT key FROM sessions WHERE json_extract(origin, '$.channel') = ?
               AND json_extract(origin, '$.chatId') = ? ORDER BY updated_at DESC LIMIT 1",
        )
        .bind(channel)
        .bind(chat_id)
        .fetch_optional(&mut *self.reader().await)
        .await?;
        match r {
            Some(r) => self.latest_session(&r.try_get::<String, _>("key")?).await,
            None => Ok(None),
        }
    }
}
