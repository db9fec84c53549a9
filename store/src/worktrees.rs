//! Sub-agent worktrees: a record and its state (both engines).

use super::{Result, StoreError};

use super::decode::Columns;
use super::engine::engine_fns;

/// Where a worktree is in its life (see migration `0014_worktrees.sql`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorktreeState {
    Creating,
    Active,
    Fallback,
    Done,
}

impl WorktreeState {
    pub fn as_str(self) -> &'static str {
        match self {
            WorktreeState::Creating => "creating",
            WorktreeState::Active => "active",
            WorktreeState::Fallback => "fallback",
            WorktreeState::Done => "done",
        }
    }

    pub fn parse(s: &str) -> Result<WorktreeState> {
        Ok(match s {
            "creating" => WorktreeState::Creating,
            "active" => WorktreeState::Active,
            "fallback" => WorktreeState::Fallback,
            "done" => WorktreeState::Done,
            other => {
                return Err(StoreError::Corrupt(format!(
                    "unknown worktree state {other:?}"
                )))
            }
        })
    }
}

/// One child's worktree record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeRow {
    pub run_id: String,
    pub child_session_key: String,
    pub state: WorktreeState,
    /// Why there is no worktree (`fallback`).
    pub reason: Option<String>,
    /// The repository's top level.
    pub repo: Option<String>,
    /// The worktree's root.
    pub path: Option<String>,
    /// The child's workspace inside it (the workspace's place in the repository).
    pub workdir: Option<String>,
    pub branch: Option<String>,
    /// The commit the branch started from.
    pub base: Option<String>,
    /// What the announce says of it once done.
    pub note: Option<String>,
}

/// A `subagent_worktrees` row, from either engine.
pub(super) fn decode_worktree(r: &impl Columns) -> Result<WorktreeRow> {
    Ok(WorktreeRow {
        run_id: r.string("run_id")?,
        child_session_key: r.string("child_session_key")?,
        state: WorktreeState::parse(r.text("state")?)?,
        reason: r.opt_string("reason")?,
        repo: r.opt_string("repo")?,
        path: r.opt_string("path")?,
        workdir: r.opt_string("workdir")?,
        branch: r.opt_string("branch")?,
        base: r.opt_string("base")?,
        note: r.opt_string("note")?,
    })
}

engine_fns! {
    /// Record a child's worktree (or why it has none). The row of a run is written once.
    pub async fn record_worktree(&self, w: &WorktreeRow) -> Result<()>;
    /// Move a worktree to `state`, with its fallback `reason` or its final `note`.
    pub async fn set_worktree_state(&self, run_id: &str, state: WorktreeState, reason: Option<&str>, note: Option<&str>) -> Result<()>;
    pub async fn worktree(&self, run_id: &str) -> Result<Option<WorktreeRow>>;
    /// The directory a child session works in, when it has an active worktree.
    pub async fn worktree_workdir(&self, child_session_key: &str) -> Result<Option<String>>;
    /// Worktrees left unfinished: being created, or active while their child's announce is
    /// already made (the start-up sweep finishes them).
    pub async fn orphan_worktrees(&self) -> Result<Vec<WorktreeRow>>;
}
