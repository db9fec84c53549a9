//! The store's methods the PostgreSQL engine does not have yet: each answers
//! `StoreError::Unsupported` naming itself (never a panic, never a made-up answer). Porting
//! a method is moving its line from here to a module of its own area. docs/postgres.md
//! lists what is ported.

use super::super::{
    AllowEntry, ApprovalRow, ApprovalStatus, CronFire, CronJobRow, JobSource, NewApproval, Pairing,
    PairingRow, PoisonedUpdate, Result, SessionRow, StoreError, WorktreeRow, WorktreeState,
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
fn orphan_worktrees(&self) -> Result<Vec<WorktreeRow>>;}
