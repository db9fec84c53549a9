//! The sub-agent registry on PostgreSQL: one row per spawned child, written in the same
//! transaction as the change it records; and the durable archive timers.

use switchboard_channels::{ChatKind, Origin};

use super::super::runs::queued_row;
use super::super::subagents::decode_subagent;
use super::super::{
    now_ms, to_json, NewRun, NewSubagent, Result, RunRow, SubagentRow, INTERNAL_CHANNEL,
};
use super::inbox::{insert_inbox, insert_run};
use super::Pg;

/// Pending announces without a live `announce:<run id>` lease (PostgreSQL's own: its
/// leases are rows; SQLite's live in its one process).
const ORPHANED: crate::sql::Sql = crate::sql::subagents::subagent_row!(
    " WHERE s.announce_state = 'pending'
       AND NOT EXISTS (SELECT 1 FROM leases l
                        WHERE l.name = 'announce:' || s.run_id
                          AND l.expires_at >= switchboard_now_ms())
     ORDER BY s.ended_at, s.seq"
);

impl Pg {
    /// Register a spawn: child session, registry row, run row (queued) and the task as the
    /// child's first message, in one transaction.
    pub async fn create_subagent(
        &self,
        s: &NewSubagent<'_>,
        timeout_ms: Option<i64>,
    ) -> Result<RunRow> {
        let now = now_ms();
        let run = NewRun {
            id: s.run_id,
            session_key: s.child_session_key,
            session_id: s.child_session_id,
            agent_id: s.agent_id,
            lane: "subagent",
            claim_all: true,
            origin: None,
            model: s.model,
            timeout_ms,
        };
        // The task comes from the requester's session, through no chat.
        let task_origin = Origin {
            channel: INTERNAL_CHANNEL.into(),
            account: None,
            chat_id: s.requester_session_key.to_string(),
            thread_id: None,
            kind: ChatKind::Direct,
            reply_handle: None,
        };
        let mut tx = self.pool.begin().await?;
        // Twin of SQLite's SPAWN script (one round trip through its group-commit writer).
        sqlx::query(
            "INSERT INTO sessions (id, key, agent_id, origin, status, created_at, updated_at)
             VALUES ($1, $2, $3, NULL, 'active', $4, $4)",
        )
        .bind(s.child_session_id)
        .bind(s.child_session_key)
        .bind(s.agent_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO subagent_runs (run_id, child_session_key, requester_session_key,
                 requester_run_id, requester_origin, requester_channel, requester_chat_id,
                 requester_thread_id, task, label, agent_id, model, thinking, cleanup,
                 run_timeout_seconds, task_call_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        )
        .bind(s.run_id)
        .bind(s.child_session_key)
        .bind(s.requester_session_key)
        .bind(s.requester_run_id)
        .bind(s.requester_origin.map(to_json).transpose()?)
        .bind(s.requester_origin.map(|o| o.channel.as_str()))
        .bind(s.requester_origin.map(|o| o.chat_id.as_str()))
        .bind(s.requester_origin.and_then(|o| o.thread_id.as_deref()))
        .bind(s.task)
        .bind(s.label)
        .bind(s.agent_id)
        .bind(s.model)
        .bind(s.thinking)
        .bind(s.cleanup.as_str())
        .bind(s.run_timeout_seconds)
        .bind(s.task_call_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        insert_run(&mut tx, &run, now).await?;
        insert_inbox(
            &mut tx,
            s.child_session_key,
            &task_origin,
            s.requester_session_key,
            s.task,
            now,
        )
        .await?;
        tx.commit().await?;
        Ok(queued_row(&run))
    }

    pub async fn subagent(&self, run_id: &str) -> Result<Option<SubagentRow>> {
        let r = sqlx::query(crate::sql::subagents::BY_RUN.pg)
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_subagent).transpose()
    }

    /// The sub-agent whose child session is `key`, if any.
    pub async fn subagent_by_child(&self, key: &str) -> Result<Option<SubagentRow>> {
        let r = sqlx::query(crate::sql::subagents::BY_CHILD.pg)
            .bind(key)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_subagent).transpose()
    }

    /// The child a `task` tool call of the requester's run created, if any.
    pub async fn task_child(&self, run_id: &str, call_id: &str) -> Result<Option<SubagentRow>> {
        let r = sqlx::query(crate::sql::subagents::OF_TASK_CALL.pg)
            .bind(run_id)
            .bind(call_id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_subagent).transpose()
    }

    /// Children spawned from `requester`, newest first.
    pub async fn subagents_of(&self, requester: &str, limit: i64) -> Result<Vec<SubagentRow>> {
        let rows = sqlx::query(crate::sql::subagents::OF_REQUESTER.pg)
            .bind(requester)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_subagent).collect()
    }

    /// All sub-agents, newest first.
    pub async fn all_subagents(&self, limit: i64) -> Result<Vec<SubagentRow>> {
        let rows = sqlx::query(crate::sql::subagents::ALL.pg)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_subagent).collect()
    }

    /// Sub-agents whose run ended and whose announce is not yet queued.
    pub async fn pending_announces(&self) -> Result<Vec<SubagentRow>> {
        let rows = sqlx::query(crate::sql::subagents::PENDING_ANNOUNCES.pg)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_subagent).collect()
    }

    /// Pending announces without a live `announce:<run id>` lease.
    pub async fn orphaned_announces(&self) -> Result<Vec<SubagentRow>> {
        let rows = sqlx::query(ORPHANED.pg).fetch_all(&self.pool).await?;
        rows.iter().map(decode_subagent).collect()
    }

    /// Who stopped a child, for its announce's Notes.
    pub async fn set_stop_note(&self, run_id: &str, note: &str) -> Result<()> {
        sqlx::query(crate::sql::subagents::STOP_NOTE.pg)
            .bind(note)
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The earliest timer: (id, kind, target, due_at).
    pub async fn next_timer(&self) -> Result<Option<(i64, String, String, i64)>> {
        Ok(sqlx::query_as(crate::sql::subagents::NEXT_TIMER.pg)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Fire an archive timer: drop the timer, archive the session and stamp the registry,
    /// in one transaction. The timer's delete comes first: its row lock makes a second
    /// process firing the same timer wait, then find it gone and do nothing.
    pub async fn fire_archive_timer(&self, timer_id: i64, session_key: &str) -> Result<bool> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        let timer = sqlx::query(crate::sql::subagents::DROP_TIMER.pg)
            .bind(timer_id)
            .execute(&mut *tx)
            .await?;
        if timer.rows_affected() == 0 {
            return Ok(false); // fired already (by another process)
        }
        sqlx::query(crate::sql::subagents::ARCHIVE_SESSION.pg)
            .bind(now)
            .bind(session_key)
            .execute(&mut *tx)
            .await?;
        sqlx::query(crate::sql::subagents::STAMP_ARCHIVED.pg)
            .bind(now)
            .bind(session_key)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
}
