//! The states the store keeps as text: a run's status, and a sub-agent's outcome, cleanup
//! and announce state (read back strictly: an unknown value is a corrupt row).

use super::text::text_enum;
use super::{Result, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
    Timeout,
    Cancelled,
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Timeout => "timeout",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Result<RunStatus> {
        Ok(match s {
            "queued" => RunStatus::Queued,
            "running" => RunStatus::Running,
            "succeeded" => RunStatus::Succeeded,
            "failed" => RunStatus::Failed,
            "timeout" => RunStatus::Timeout,
            "cancelled" => RunStatus::Cancelled,
            "interrupted" => RunStatus::Interrupted,
            other => return Err(StoreError::Corrupt(format!("unknown run status {other}"))),
        })
    }

    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

text_enum! {
    /// How a child's run ended (`subagent_runs.outcome`), from its run's status.
    pub enum Outcome {
        Success = "success",
        Error = "error",
        Timeout = "timeout",
        /// Stopped (`/stop`, `/subagents stop`, the API).
        Cancelled = "cancelled",
        /// Cut by a restart with `subagents.onRestart: "interrupt"`.
        Interrupted = "interrupted",
    }
}

impl Outcome {
    /// The outcome recorded for a child whose run ended with `status`.
    pub fn of(status: RunStatus) -> Outcome {
        match status {
            RunStatus::Succeeded => Outcome::Success,
            RunStatus::Failed => Outcome::Error,
            RunStatus::Timeout => Outcome::Timeout,
            RunStatus::Interrupted => Outcome::Interrupted,
            RunStatus::Cancelled | RunStatus::Queued | RunStatus::Running => Outcome::Cancelled,
        }
    }
}

text_enum! {
    /// What becomes of a child session after its announce (`cleanup`).
    pub enum Cleanup {
        /// Archived `archiveAfterMinutes` after its run ended.
        Keep = "keep",
        /// Archived right after the announce.
        Delete = "delete",
    }
}

text_enum! {
    /// Where a child's announce is (`announce_state`).
    pub enum AnnounceState {
        /// The child's run has not ended.
        None = "none",
        /// Its run ended: the announce is to be made (survives restarts).
        Pending = "pending",
        /// Posted to the requester's chat (through the outbox).
        Queued = "queued",
        /// The child answered `ANNOUNCE_SKIP`: nothing posted.
        Skipped = "skipped",
        /// Given up after repeated failures.
        Failed = "failed",
    }
}
