//! A child's announce in the store: asking the child once, counting failed attempts, and
//! completing it (the step's answer, the registry, the outbox row — its text and its
//! footer apart, to the requester's chat columns — and, for `cleanup: "delete"`, the
//! archive timer) in one transaction.

use sqlx::Row;

use super::messages::{bind_message, NewMessage};
use super::subagents::AnnounceState;
use super::writer::{script, Args, Params, Script};
use super::{now_ms, Result, Sqlite};
pub(super) use crate::announces::*;

/// Finishing an announce. Only a `pending` announce moves (the UPDATE's row says it did):
/// the step's answer is stored only then, the outbox row only then (`changes()` is the
/// UPDATE's count), and the timer only for the archive the UPDATE just set (`archive_at`
/// is this call's time; a repeat in the same millisecond re-arms the same timer).
///
/// Fan-in: the first statement records the announce in the requester's active session
/// (when the caller gives its text), under the same `pending` guard, so a restart neither
/// loses nor doubles it.
/// Twin of `Pg::complete_announce_fan_in` (single statements gated by `RETURNING`: no `changes()` there).
static COMPLETE_ANNOUNCE: Script = script!(
    "INSERT INTO messages (session_id, run_id, role, content, created_at)
         SELECT s.id, NULL, 'user', ?, ? FROM subagent_runs r
             JOIN sessions s ON s.key = r.requester_session_key AND s.status = 'active'
         WHERE ? AND r.run_id = ? AND r.announce_state = 'pending';
     INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id, tool_name, created_at)
         SELECT ?, NULL, ?, ?, ?, ?, ?, ? WHERE ?
             AND EXISTS (SELECT 1 FROM subagent_runs WHERE run_id = ? AND announce_state = 'pending');
     UPDATE subagent_runs SET announce_state = ?, archive_at = CASE WHEN ? THEN ? ELSE archive_at END
         WHERE run_id = ? AND announce_state = 'pending'
         RETURNING 'announce' AS part;
     INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, footer, next_attempt_at, created_at)
         SELECT ?, requester_channel, requester_chat_id, requester_thread_id, requester_origin, ?, ?, ?, ?
         FROM subagent_runs
         WHERE run_id = ? AND changes() = 1 AND requester_origin IS NOT NULL AND ?
         ON CONFLICT(key) DO NOTHING;
     INSERT INTO timers (kind, target, due_at)
         SELECT 'archive', child_session_key, ? FROM subagent_runs
         WHERE run_id = ? AND ? AND announce_state = ? AND archive_at = ?
         ON CONFLICT(kind, target) DO UPDATE SET due_at = excluded.due_at;"
);

/// Asking the child for its announce: the prompt is stored in its transcript only the
/// first time (the registry records when), however often the step runs.
/// Twin of `Pg::ask_for_announce` (gated by the UPDATE's row count there).
static ANNOUNCE_PROMPT: Script = script!(
    "INSERT INTO messages (session_id, run_id, role, content, created_at)
         SELECT ?, NULL, 'user', ?, ? WHERE EXISTS
             (SELECT 1 FROM subagent_runs WHERE run_id = ? AND announce_prompt_at IS NULL);
     UPDATE subagent_runs SET announce_prompt_at = ? WHERE run_id = ? AND announce_prompt_at IS NULL;"
);

/// The parameters of [`COMPLETE_ANNOUNCE`].
pub(super) struct CompleteAnnounce<'a> {
    pub(super) run_id: &'a str,
    /// `None`: a skipped announce.
    pub(super) message: Option<AnnounceMessage<'a>>,
    pub(super) archive_now: bool,
    /// The child's answer to the announce prompt and its session.
    pub(super) step_answer: Option<(&'a str, &'a NewMessage)>,
    /// The announce as the requester agent reads it (fan-in), if it is recorded.
    pub(super) fan_in: Option<&'a str>,
    pub(super) now: i64,
}

impl Params for CompleteAnnounce<'_> {
    fn script(&self) -> &'static Script {
        &COMPLETE_ANNOUNCE
    }

    fn args(&self) -> Result<Args> {
        let CompleteAnnounce {
            run_id,
            message,
            archive_now,
            fan_in,
            now,
            ..
        } = *self;
        let (session_id, m) = self.step_answer.unzip();
        let state = if message.is_some() {
            AnnounceState::Queued
        } else {
            AnnounceState::Skipped
        };
        // the requester's transcript
        let args = Args::default()
            .bind(fan_in)
            .bind(now)
            .bind(fan_in.is_some())
            .bind(run_id);
        // the step's answer
        Ok(bind_message(args.bind(session_id), m)?
            .bind(now)
            .bind(m.is_some())
            .bind(run_id)
            // the registry
            .bind(state.as_str())
            .bind(archive_now)
            .bind(now)
            .bind(run_id)
            // the announce message
            .bind(format!("announce:{run_id}"))
            .bind(message.map(|m| m.text))
            .bind(message.map(|m| m.footer))
            .bind(now)
            .bind(now)
            .bind(run_id)
            .bind(message.is_some())
            // the archive timer
            .bind(now)
            .bind(run_id)
            .bind(archive_now)
            .bind(state.as_str())
            .bind(now))
    }
}

/// The parameters of [`ANNOUNCE_PROMPT`].
pub(super) struct AskForAnnounce<'a> {
    pub(super) run_id: &'a str,
    pub(super) session_id: &'a str,
    /// The prompt.
    pub(super) text: &'a str,
    pub(super) now: i64,
}

impl Params for AskForAnnounce<'_> {
    fn script(&self) -> &'static Script {
        &ANNOUNCE_PROMPT
    }

    fn args(&self) -> Result<Args> {
        let AskForAnnounce {
            run_id,
            session_id,
            text,
            now,
        } = *self;
        Ok(Args::default()
            // the prompt
            .bind(session_id)
            .bind(text)
            .bind(now)
            .bind(run_id)
            // the registry
            .bind(now)
            .bind(run_id))
    }
}

impl Sqlite {
    /// Store the announce prompt `text` in the child's transcript (session `session_id`),
    /// unless it was stored for this announce before.
    pub async fn ask_for_announce(&self, run_id: &str, session_id: &str, text: &str) -> Result<()> {
        let ask = AskForAnnounce {
            run_id,
            session_id,
            text,
            now: now_ms(),
        };
        self.conns.write(&ask).await?;
        Ok(())
    }

    pub async fn bump_announce_attempts(&self, run_id: &str) -> Result<i64> {
        let r = sqlx::query(crate::sql::announces::BUMP_ATTEMPTS.sqlite)
            .bind(run_id)
            .fetch_one(&mut *self.writer().await)
            .await?;
        Ok(r.try_get("announce_attempts")?)
    }

    /// Finish the announce: queue `message` in the outbox (key `announce:<runId>`) or
    /// record a skip (`None`), and for `cleanup: delete` arm an immediate archive, in one transaction. Only a
    /// `pending` announce moves, so a second call does nothing. `step_answer` (the session
    /// and the child's answer to the announce prompt) is stored in the same transaction.
    pub async fn complete_announce(
        &self,
        run_id: &str,
        message: Option<AnnounceMessage<'_>>,
        archive_now: bool,
        step_answer: Option<(&str, &NewMessage)>,
    ) -> Result<bool> {
        self.complete_announce_fan_in(run_id, message, archive_now, step_answer, None)
            .await
    }

    /// [`Sqlite::complete_announce`], and `fan_in` (the announce as the requester agent
    /// reads it) appended to the requester's active session in the same transaction.
    pub async fn complete_announce_fan_in(
        &self,
        run_id: &str,
        message: Option<AnnounceMessage<'_>>,
        archive_now: bool,
        step_answer: Option<(&str, &NewMessage)>,
        fan_in: Option<&str>,
    ) -> Result<bool> {
        let complete = CompleteAnnounce {
            run_id,
            message,
            archive_now,
            step_answer,
            fan_in,
            now: now_ms(),
        };
        let rows = self.conns.write(&complete).await?;
        Ok(!rows.is_empty())
    }

    /// Mark an announce failed for good (kept for `/subagents info`).
    pub async fn fail_announce(&self, run_id: &str) -> Result<()> {
        sqlx::query(crate::sql::announces::FAIL.sqlite)
            .bind(run_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }
}
