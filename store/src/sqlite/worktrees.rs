//! Sub-agent worktrees (`subagent_worktrees`): where a child isolated in its own git
//! worktree works, recorded before the worktree is made and before the child runs.

use sqlx::Row;

use super::super::worktrees::decode_worktree;
use super::{now_ms, Result, Sqlite};
pub(super) use crate::worktrees::*;

impl Sqlite {
    /// Record a child's worktree (or why it has none). The row of a run is written once.
    pub async fn record_worktree(&self, w: &WorktreeRow) -> Result<()> {
        sqlx::query(crate::sql::worktrees::RECORD.sqlite)
            .bind(&w.run_id)
            .bind(&w.child_session_key)
            .bind(w.state.as_str())
            .bind(&w.reason)
            .bind(&w.repo)
            .bind(&w.path)
            .bind(&w.workdir)
            .bind(&w.branch)
            .bind(&w.base)
            .bind(&w.note)
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    /// Move a worktree to `state`, with its fallback `reason` or its final `note`.
    pub async fn set_worktree_state(
        &self,
        run_id: &str,
        state: WorktreeState,
        reason: Option<&str>,
        note: Option<&str>,
    ) -> Result<()> {
        sqlx::query(crate::sql::worktrees::SET_STATE.sqlite)
            .bind(state.as_str())
            .bind(reason)
            .bind(note)
            .bind(now_ms())
            .bind(run_id)
            .execute(&mut *self.writer().await)
            .await?;
        Ok(())
    }

    pub async fn worktree(&self, run_id: &str) -> Result<Option<WorktreeRow>> {
        let r = sqlx::query(crate::sql::worktrees::BY_RUN.sqlite)
            .bind(run_id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        r.as_ref().map(decode_worktree).transpose()
    }

    /// The directory a child session works in, when it has an active worktree.
    pub async fn worktree_workdir(&self, child_session_key: &str) -> Result<Option<String>> {
        let r = sqlx::query(crate::sql::worktrees::ACTIVE_WORKDIR.sqlite)
            .bind(child_session_key)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        Ok(r.map(|r| r.try_get("workdir")).transpose()?.flatten())
    }

    /// Worktrees left unfinished: being created, or active while their child's announce is
    /// already made (the start-up sweep finishes them).
    pub async fn orphan_worktrees(&self) -> Result<Vec<WorktreeRow>> {
        let rows = sqlx::query(crate::sql::worktrees::ORPHANS.sqlite)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_worktree).collect()
    }
}
