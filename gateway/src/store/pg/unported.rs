//! The store's methods the PostgreSQL engine does not have yet: each answers
//! `StoreError::Unsupported` naming itself (never a panic, never a made-up answer). Porting
//! a method is moving its line from here to a module of its own area. docs/postgres.md
//! lists what is ported.

use switchboard_channels::{Action, Origin};

use super::super::{
    AllowEntry, AnnounceMessage, ApprovalRow, ApprovalStatus, Claim, CronFire, CronJobRow,
    InboxItem, JobSource, MessageRow, NewApproval, NewInbound, NewMessage, NewRun, NewSubagent,
    OutboxRow, Pairing, PairingRow, PoisonedUpdate, ProgressLine, Result, RunEnd, RunFinished,
    RunRow, SessionRow, Started, StoreError, SubagentRow, WaitingSession, WorktreeRow,
    WorktreeState,
};
use super::{Pg, ENGINE};
use crate::config::CronJobConfig;

/// Methods of [`Pg`] that fail with `Unsupported`, each named by its own name.
macro_rules! unported {
    ($( $(#[$meta:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty; )*) => {
        impl Pg {
            $(
                $(#[$meta])*
                pub(in crate::store) async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    $( let _ = $arg; )*
                    Err(StoreError::Unsupported {
                        engine: ENGINE,
                        what: stringify!($name),
                    })
                }
            )*
        }
    };
}

unported! {
    // sessions
    fn ensure_session(&self, key: &str, agent_id: &str, origin: Option<&Origin>) -> Result<SessionRow>;
    fn active_session(&self, key: &str) -> Result<Option<SessionRow>>;
    fn session_by_id(&self, id: &str) -> Result<Option<SessionRow>>;
    fn latest_session(&self, key: &str) -> Result<Option<SessionRow>>;
    fn archive_session(&self, key: &str) -> Result<Option<SessionRow>>;
    fn list_sessions(&self, include_archived: bool, limit: i64) -> Result<Vec<SessionRow>>;
    // messages
    fn append_message(&self, session_id: &str, run_id: Option<&str>, m: &NewMessage) -> Result<i64>;
    fn transcript(&self, session_id: &str) -> Result<Vec<MessageRow>>;
    fn transcript_tail(&self, session_id: &str, limit: i64) -> Result<Vec<MessageRow>>;
    // inbox
    fn claim_inbox(&self, session_key: &str, session_id: &str, run_id: &str, claim: Claim) -> Result<Vec<InboxItem>>;
    fn push_inbox(&self, session_key: &str, origin: &Origin, sender_id: &str, text: &str) -> Result<i64>;
    fn inbox_len(&self, session_key: &str) -> Result<i64>;
    fn clear_inbox(&self, session_key: &str) -> Result<u64>;
    fn sessions_with_inbox(&self) -> Result<Vec<WaitingSession>>;
    fn accept_message(&self, m: &NewInbound<'_>, run: Option<&NewRun<'_>>) -> Result<Option<(i64, Option<RunRow>)>>;
    fn accept_and_start(&self, m: &NewInbound<'_>, run: &NewRun<'_>, model: Option<&str>) -> Result<Option<(i64, RunRow, Started)>>;
    // starts
    fn start_run(&self, id: &str, session_key: &str, session_id: &str, model: Option<&str>, claim: Option<Claim>) -> Result<Option<Started>>;
    // runs
    fn create_run(&self, run: &NewRun<'_>) -> Result<RunRow>;
    fn get_run(&self, id: &str) -> Result<Option<RunRow>>;
    fn update_run_usage(&self, id: &str, steps: i64, input_tokens: i64, output_tokens: i64) -> Result<()>;
    fn finish_run(&self, id: &str, end: &RunEnd) -> Result<RunFinished>;
    fn finish_run_with(&self, id: &str, end: &RunEnd, last: Option<(&str, &NewMessage)>) -> Result<RunFinished>;
    fn unfinished_runs(&self) -> Result<Vec<RunRow>>;
    fn session_runs(&self, session_key: &str, limit: i64) -> Result<Vec<RunRow>>;
    // outbox
    fn enqueue_outbox(&self, key: &str, origin: &Origin, text: &str) -> Result<bool>;
    fn enqueue_outbox_with_actions(&self, key: &str, origin: &Origin, text: &str, actions: &[Action]) -> Result<bool>;
    fn due_outbox(&self, limit: i64) -> Result<Vec<OutboxRow>>;
    fn next_outbox_due(&self) -> Result<Option<i64>>;
    fn mark_outbox_progress(&self, id: i64, parts: i64) -> Result<()>;
    fn claim_outbox(&self, id: i64) -> Result<bool>;
    fn reset_sending_outbox(&self) -> Result<u64>;
    fn mark_outbox_sent(&self, id: i64) -> Result<()>;
    fn mark_outbox_failed(&self, id: i64, error: &str, retry_at: Option<i64>) -> Result<()>;
    fn outbox_counts(&self) -> Result<Vec<(String, i64)>>;
    fn outbox_state(&self, key: &str) -> Result<Option<(String, i64)>>;
    fn retry_chat_now(&self, channel: &str, chat_id: &str) -> Result<u64>;
    #[cfg(test)]
    fn outbox_chat_for_tests(&self, key: &str) -> Result<(String, String, Option<String>, String, Option<String>)>;
    // interrupts
    fn checkpoint_run(&self, id: &str, steps: i64, input_tokens: i64, output_tokens: i64) -> Result<()>;
    fn cancel_queued_run(&self, id: &str) -> Result<()>;
    fn drop_waiting(&self, session_key: &str, run_ids: &[String], error: &str) -> Result<Vec<i64>>;
    fn claimed_by(&self, run: &RunRow) -> Result<Vec<i64>>;
    // subagents
    fn create_subagent(&self, s: &NewSubagent<'_>, timeout_ms: Option<i64>) -> Result<RunRow>;
    fn subagent(&self, run_id: &str) -> Result<Option<SubagentRow>>;
    fn subagent_by_child(&self, key: &str) -> Result<Option<SubagentRow>>;
    fn task_child(&self, run_id: &str, call_id: &str) -> Result<Option<SubagentRow>>;
    fn subagents_of(&self, requester: &str, limit: i64) -> Result<Vec<SubagentRow>>;
    fn all_subagents(&self, limit: i64) -> Result<Vec<SubagentRow>>;
    fn pending_announces(&self) -> Result<Vec<SubagentRow>>;
    fn set_stop_note(&self, run_id: &str, note: &str) -> Result<()>;
    fn next_timer(&self) -> Result<Option<(i64, String, String, i64)>>;
    fn fire_archive_timer(&self, timer_id: i64, session_key: &str) -> Result<()>;
    // announces
    fn ask_for_announce(&self, run_id: &str, session_id: &str, text: &str) -> Result<()>;
    fn bump_announce_attempts(&self, run_id: &str) -> Result<i64>;
    fn complete_announce(&self, run_id: &str, message: Option<AnnounceMessage<'_>>, archive_now: bool, step_answer: Option<(&str, &NewMessage)>) -> Result<bool>;
    fn complete_announce_fan_in(&self, run_id: &str, message: Option<AnnounceMessage<'_>>, archive_now: bool, step_answer: Option<(&str, &NewMessage)>, fan_in: Option<&str>) -> Result<bool>;
    fn fail_announce(&self, run_id: &str) -> Result<()>;
    // approvals
    fn request_approval(&self, a: &NewApproval<'_>) -> Result<(ApprovalRow, bool)>;
    fn approval(&self, id: &str) -> Result<Option<ApprovalRow>>;
    fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRow>>;
    fn answer_approval(&self, id: &str, channel: &str, chat_id: &str, status: ApprovalStatus, by: &str) -> Result<Option<ApprovalRow>>;
    fn close_approval(&self, id: &str, status: ApprovalStatus) -> Result<bool>;
    fn pending_approvals(&self) -> Result<Vec<ApprovalRow>>;
    fn exec_allowed(&self, agent_id: &str) -> Result<Vec<String>>;
    fn exec_allowlist(&self) -> Result<Vec<AllowEntry>>;
    fn revoke_exec_allowed(&self, path: &str, agent_id: Option<&str>) -> Result<u64>;
    fn session_for_chat(&self, channel: &str, chat_id: &str) -> Result<Option<SessionRow>>;
    // channels
    fn channel_state(&self, channel: &str, key: &str) -> Result<Option<String>>;
    fn set_channel_state(&self, channel: &str, key: &str, value: &str) -> Result<()>;
    fn mark_inbound_seen(&self, channel: &str, message_id: &str) -> Result<bool>;
    fn pairing_for(&self, channel: &str, sender_id: &str, sender_name: Option<&str>) -> Result<Pairing>;
    fn pairing_approved(&self, channel: &str, sender_id: &str) -> Result<bool>;
    fn approve_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>>;
    fn reject_pairing(&self, channel: &str, code: &str) -> Result<Option<PairingRow>>;
    fn revoke_pairing(&self, channel: &str, sender_id: &str) -> Result<Option<PairingRow>>;
    fn list_pairings(&self) -> Result<Vec<PairingRow>>;
    // cron
    fn cron_jobs(&self) -> Result<Vec<CronJobRow>>;
    fn cron_job(&self, id: &str) -> Result<Option<CronJobRow>>;
    fn due_cron_jobs(&self, now: i64) -> Result<Vec<CronJobRow>>;
    fn next_cron_due(&self) -> Result<Option<i64>>;
    fn insert_cron_job(&self, spec: &CronJobConfig, source: JobSource, next_run_at: Option<i64>) -> Result<bool>;
    fn sync_config_cron_jobs(&self, upsert: &[(&CronJobConfig, Option<i64>)], keep: &[&str]) -> Result<u64>;
    fn delete_cron_job(&self, id: &str) -> Result<bool>;
    fn set_cron_job_enabled(&self, id: &str, enabled: bool, next_run_at: Option<i64>) -> Result<bool>;
    fn cron_job_in_flight(&self, last_inbox_id: i64) -> Result<bool>;
    fn skip_cron_job(&self, id: &str, next_run_at: Option<i64>) -> Result<()>;
    fn fire_cron_job(&self, fire: &CronFire<'_>) -> Result<i64>;
    // ledger
    fn save_inbound_offset(&self, channel: &str, key: &str, next_offset: i64) -> Result<()>;
    fn begin_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<i64>;
    fn uncount_inbound_attempt(&self, channel: &str, update_id: i64) -> Result<()>;
    fn forget_inbound_attempts(&self, channel: &str, update_id: i64) -> Result<()>;
    fn inbound_attempts(&self, channel: &str, update_id: i64) -> Result<i64>;
    fn poison_inbound(&self, p: &PoisonedUpdate) -> Result<()>;
    fn poisoned_updates(&self, channel: &str) -> Result<Vec<PoisonedUpdate>>;
    fn poisoned_counts(&self) -> Result<Vec<(String, i64)>>;
    // worktrees
    fn record_worktree(&self, w: &WorktreeRow) -> Result<()>;
    fn set_worktree_state(&self, run_id: &str, state: WorktreeState, reason: Option<&str>, note: Option<&str>) -> Result<()>;
    fn worktree(&self, run_id: &str) -> Result<Option<WorktreeRow>>;
    fn worktree_workdir(&self, child_session_key: &str) -> Result<Option<String>>;
    fn orphan_worktrees(&self) -> Result<Vec<WorktreeRow>>;
    // progress
    fn progress_line(&self, child_session_key: &str) -> Result<Option<ProgressLine>>;
    fn save_progress_line(&self, line: &ProgressLine) -> Result<()>;
}
