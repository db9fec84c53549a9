//! The sub-agent registry: one row per spawned child, updated at every transition in the
//! same transaction as the change it records; plus the durable archive timers. (The
//! announce's own writes are in `announces`.)

use sqlx::Row;
use switchboard_channels::Origin;

use super::super::subagents::decode_subagent;
use super::runs::{queued_row, NewRun, RunRow};
use super::sessions::{SessionRow, SessionStatus};
use super::writer::{script, Args, Params, Script};
use super::{now_ms, to_json, Result, Sqlite};
pub(super) use crate::subagents::*;

/// A spawn: the child's session, its registry row, its first run (queued) and the task as
/// its first message, in one transaction. Twin of `Pg::create_subagent` (a transaction of
/// single statements there; one round trip through the group-commit writer here).
static SPAWN: Script = script!(
    "INSERT INTO sessions (id, key, agent_id, origin, status, created_at, updated_at)
         VALUES (?, ?, ?, NULL, 'active', ?, ?);
     INSERT INTO subagent_runs (run_id, child_session_key, requester_session_key, requester_run_id,
             requester_origin, requester_channel, requester_chat_id, requester_thread_id,
             task, label, agent_id, model, thinking, cleanup, run_timeout_seconds, task_call_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);
     INSERT INTO runs (id, session_key, session_id, agent_id, lane, claim, status, origin, model, timeout_ms, created_at)
         VALUES (?, ?, ?, ?, 'subagent', 'all', 'queued', NULL, ?, ?, ?);
     INSERT INTO inbox (session_key, origin, origin_channel, origin_chat_id, origin_thread_id,
             sender_id, text, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?);"
);

/// The parameters of [`SPAWN`].
pub(super) struct Spawn<'a> {
    pub(super) spawn: &'a NewSubagent<'a>,
    /// The child's run timeout (`None`: none).
    pub(super) timeout_ms: Option<i64>,
    pub(super) now: i64,
}

impl Params for Spawn<'_> {
    fn script(&self) -> &'static Script {
        &SPAWN
    }

    fn args(&self) -> Result<Args> {
        let Spawn {
            spawn: s,
            timeout_ms,
            now,
        } = *self;
        // The task comes from the requester's session, through no chat.
        let origin = Origin {
            channel: INTERNAL_CHANNEL.into(),
            account: None,
            chat_id: s.requester_session_key.to_string(),
            thread_id: None,
            kind: switchboard_channels::ChatKind::Direct,
            reply_handle: None,
        };
        Ok(Args::default()
            // sessions
            .bind(s.child_session_id)
            .bind(s.child_session_key)
            .bind(s.agent_id)
            .bind(now)
            .bind(now)
            // subagent_runs
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
            // runs
            .bind(s.run_id)
            .bind(s.child_session_key)
            .bind(s.child_session_id)
            .bind(s.agent_id)
            .bind(s.model)
            .bind(timeout_ms)
            .bind(now)
            // inbox
            .bind(s.child_session_key)
            .bind(to_json(&origin)?)
            .bind(origin.channel.as_str())
            .bind(origin.chat_id.as_str())
            .bind(origin.thread_id.as_deref())
            .bind(s.requester_session_key)
            .bind(s.task)
            .bind(now))
    }
}

impl Sqlite {
    /// Register a spawn: child session, registry row, run row and the task as the child's
    /// first message, all committed together (one script) before the run is queued.
    pub async fn create_subagent(
        &self,
        s: &NewSubagent<'_>,
        timeout_ms: Option<i64>,
    ) -> Result<RunRow> {
        let now = now_ms();
        let forgotten = self.sessions.forgotten();
        self.conns
            .write(&Spawn {
                spawn: s,
                timeout_ms,
                now,
            })
            .await?;
        // The child's first run asks for its session at once.
        self.sessions.put_unless_forgotten(
            SessionRow {
                id: s.child_session_id.to_string(),
                key: s.child_session_key.to_string(),
                agent_id: s.agent_id.to_string(),
                origin: None,
                status: SessionStatus::Active,
                created_at: now,
                updated_at: now,
                archived_at: None,
            },
            forgotten,
        );
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
        Ok(queued_row(&run))
    }

    pub async fn subagent(&self, run_id: &str) -> Result<Option<SubagentRow>> {
        let r = sqlx::query(crate::sql::subagents::BY_RUN.sqlite)
            .bind(run_id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_subagent).transpose()
    }

    /// The sub-agent whose child session is `key`, if any.
    pub async fn subagent_by_child(&self, key: &str) -> Result<Option<SubagentRow>> {
        let r = sqlx::query(crate::sql::subagents::BY_CHILD.sqlite)
            .bind(key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_subagent).transpose()
    }

    /// The child a `task` tool call (`call_id` of the requester's run `run_id`) created, if
    /// any: a resumed requester waits for it instead of creating another.
    pub async fn task_child(&self, run_id: &str, call_id: &str) -> Result<Option<SubagentRow>> {
        let r = sqlx::query(crate::sql::subagents::OF_TASK_CALL.sqlite)
            .bind(run_id)
            .bind(call_id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_subagent).transpose()
    }

    /// Children spawned from `requester`, newest first.
    pub async fn subagents_of(&self, requester: &str, limit: i64) -> Result<Vec<SubagentRow>> {
        let rows = sqlx::query(crate::sql::subagents::OF_REQUESTER.sqlite)
            .bind(requester)
            .bind(limit)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_subagent).collect()
    }

    /// All sub-agents, newest first.
    pub async fn all_subagents(&self, limit: i64) -> Result<Vec<SubagentRow>> {
        let rows = sqlx::query(crate::sql::subagents::ALL.sqlite)
            .bind(limit)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_subagent).collect()
    }

    /// Sub-agents whose run ended and whose announce is not yet queued.
    pub async fn pending_announces(&self) -> Result<Vec<SubagentRow>> {
        let rows = sqlx::query(crate::sql::subagents::PENDING_ANNOUNCES.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_subagent).collect()
    }

    /// Pending announces without a live `announce:<run id>` lease (leases live in this
    /// process: one process per database file).
    pub async fn orphaned_announces(&self) -> Result<Vec<SubagentRow>> {
        let mut pending = self.pending_announces().await?;
        pending.retain(|row| !self.lease_live(&format!("announce:{}", row.run_id)));
        Ok(pending)
    }

    /// Who stopped a child, for its announce's Notes (set before the cancel fires).
    pub async fn set_stop_note(&self, run_id: &str, note: &str) -> Result<()> {
        sqlx::query(crate::sql::subagents::STOP_NOTE.sqlite)
            .bind(note)
            .bind(run_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// The earliest timer: (id, kind, target, due_at).
    pub async fn next_timer(&self) -> Result<Option<(i64, String, String, i64)>> {
        let r = sqlx::query(crate::sql::subagents::NEXT_TIMER.sqlite)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.map(|r| {
            Ok((
                r.try_get("id")?,
                r.try_get("kind")?,
                r.try_get("target")?,
                r.try_get("due_at")?,
            ))
        })
        .transpose()
    }

    /// Fire an archive timer: archive the session, stamp the registry and drop the timer,
    /// in one transaction.
    pub async fn fire_archive_timer(&self, timer_id: i64, session_key: &str) -> Result<bool> {
        let now = now_ms();
        let mut w = self.writer().await;
        let mut tx = super::begin_write(&mut w).await?;
        let timer = sqlx::query(crate::sql::subagents::DROP_TIMER.sqlite)
            .bind(timer_id)
            .execute(&mut *tx)
            .await?;
        if timer.rows_affected() == 0 {
            return Ok(false); // fired already
        }
        // Before the commit: see `ensure_session`.
        self.sessions.forget(session_key);
        let archived: Option<String> =
            sqlx::query_scalar(crate::sql::subagents::ARCHIVE_SESSION.sqlite)
                .bind(now)
                .bind(session_key)
                .fetch_optional(&mut *tx)
                .await?;
        if let Some(id) = &archived {
            self.transcripts.forget(id);
        }
        sqlx::query(crate::sql::subagents::STAMP_ARCHIVED.sqlite)
            .bind(now)
            .bind(session_key)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }
}
