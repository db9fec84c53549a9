//! Exec approval requests and the allow-always list: their rows and states (both engines).

use switchboard_channels::Origin;

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;
use super::sessions::SessionRow;
use super::Result;

/// The state of a request: `pending` until answered, stopped or expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalStatus {
    Pending,
    AllowOnce,
    AllowAlways,
    Denied,
    /// The run was stopped while it waited.
    Cancelled,
    /// Nobody answered within `tools.exec.approvalTimeout`.
    Expired,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::AllowOnce => "allow-once",
            ApprovalStatus::AllowAlways => "allow-always",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Cancelled => "cancelled",
            ApprovalStatus::Expired => "expired",
        }
    }

    pub fn parse(s: &str) -> Result<ApprovalStatus> {
        Ok(match s {
            "pending" => ApprovalStatus::Pending,
            "allow-once" => ApprovalStatus::AllowOnce,
            "allow-always" => ApprovalStatus::AllowAlways,
            "denied" => ApprovalStatus::Denied,
            "cancelled" => ApprovalStatus::Cancelled,
            "expired" => ApprovalStatus::Expired,
            other => {
                return Err(super::StoreError::Corrupt(format!(
                    "unknown approval status {other:?}"
                )))
            }
        })
    }

    /// Whether the command may run.
    pub fn allows(self) -> bool {
        matches!(
            self,
            ApprovalStatus::AllowOnce | ApprovalStatus::AllowAlways
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRow {
    pub id: String,
    pub run_id: String,
    pub tool_call_id: String,
    pub session_key: String,
    pub agent_id: String,
    pub label: Option<String>,
    pub origin: Origin,
    pub workdir: String,
    pub command: String,
    pub executables: Vec<String>,
    pub status: ApprovalStatus,
    pub decided_by: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    pub resolved_at: Option<i64>,
}

/// An `approval_requests` row, from either engine.
pub(super) fn decode_approval(r: &impl Columns) -> Result<ApprovalRow> {
    Ok(ApprovalRow {
        id: r.string("id")?,
        run_id: r.string("run_id")?,
        tool_call_id: r.string("tool_call_id")?,
        session_key: r.string("session_key")?,
        agent_id: r.string("agent_id")?,
        label: r.opt_string("label")?,
        origin: from_json(r.text("origin")?)?,
        workdir: r.string("workdir")?,
        command: r.string("command")?,
        executables: from_json(r.text("executables")?)?,
        status: ApprovalStatus::parse(r.text("status")?)?,
        decided_by: r.opt_string("decided_by")?,
        created_at: r.int("created_at")?,
        expires_at: r.int("expires_at")?,
        resolved_at: r.opt_int("resolved_at")?,
    })
}

/// A request to record (`id` is used only if the call has none yet).
pub struct NewApproval<'a> {
    pub id: &'a str,
    pub run_id: &'a str,
    pub tool_call_id: &'a str,
    pub session_key: &'a str,
    pub agent_id: &'a str,
    pub label: Option<&'a str>,
    pub origin: &'a Origin,
    pub workdir: &'a str,
    pub command: &'a str,
    pub executables: &'a [String],
    pub expires_at: i64,
}

/// An executable an agent may run without asking.
#[derive(Debug, Clone, PartialEq)]
pub struct AllowEntry {
    pub agent_id: String,
    pub path: String,
    pub approval_id: Option<String>,
    pub created_at: i64,
}

/// An `exec_allowlist` row, from either engine.
pub(super) fn decode_allow_entry(r: &impl Columns) -> Result<AllowEntry> {
    Ok(AllowEntry {
        agent_id: r.string("agent_id")?,
        path: r.string("path")?,
        approval_id: r.opt_string("approval_id")?,
        created_at: r.int("created_at")?,
    })
}

engine_fns! {
    /// The request of a tool call: the existing one (a resumed run re-executing the call),
    /// else `a` recorded now. The bool says whether it was created by this call.
    pub async fn request_approval(&self, a: &NewApproval<'_>) -> Result<(ApprovalRow, bool)>;
    pub async fn approval(&self, id: &str) -> Result<Option<ApprovalRow>>;
    /// The requests of a run's tool calls (to find the calls a resumed run re-executes).
    pub async fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRow>>;
    /// Answer a pending request from the chat `channel`/`chat_id`: `None` when there is
    /// no pending, unexpired request with that id for that chat (nothing changes then).
    /// `allow-always` also stores the request's executables for its agent, in the same
    /// transaction.
    pub async fn answer_approval(&self, id: &str, channel: &str, chat_id: &str, status: ApprovalStatus, by: &str) -> Result<Option<ApprovalRow>>;
    /// End a pending request without an answer (`cancelled`, `expired`); false if it was
    /// no longer pending.
    pub async fn close_approval(&self, id: &str, status: ApprovalStatus) -> Result<bool>;
    /// Requests still waiting for an answer, oldest first.
    pub async fn pending_approvals(&self) -> Result<Vec<ApprovalRow>>;
    /// The executables `agent_id` may run without asking (from `allow-always`).
    pub async fn exec_allowed(&self, agent_id: &str) -> Result<Vec<String>>;
    pub async fn exec_allowlist(&self) -> Result<Vec<AllowEntry>>;
    /// Remove `path` from the stored allowlist (of `agent_id`, or of every agent);
    /// returns how many entries went.
    pub async fn revoke_exec_allowed(&self, path: &str, agent_id: Option<&str>) -> Result<u64>;
    /// The newest session whose last inbound message came from `channel`/`chat_id` (the
    /// chats the `message` tool may write to).
    pub async fn session_for_chat(&self, channel: &str, chat_id: &str) -> Result<Option<SessionRow>>;
}
