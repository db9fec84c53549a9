//! Sub-agent worktrees on PostgreSQL (`subagent_worktrees`): where a child isolated in its
//! own git worktree works, recorded before the worktree is made and before the child runs.

use super::super::worktrees::decode_worktree;
use super::super::{now_ms, Result, WorktreeRow, WorktreeState};
use super::Pg;

impl Pg {
    /// Record a child's worktree (or why it has none). The row of a run is written once.
    pub async fn record_worktree(&self, w: &WorktreeRow) -> Result<()> {
        sqlx::query(crate::sql::worktrees::RECORD.pg)
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
            .execute(&self.pool)
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
        sqlx::query(crate::sql::worktrees::SET_STATE.pg)
            .bind(state.as_str())
            .bind(reason)
            .bind(note)
            .bind(now_ms())
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn worktree(&self, run_id: &str) -> Result<Option<WorktreeRow>> {
        let r = sqlx::query(crate::sql::worktrees::BY_RUN.pg)
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_worktree).transpose()
    }

    /// The directory a child session works in, when it has an active worktree.
    pub async fn worktree_workdir(&self, child_session_key: &str) -> Result<Option<String>> {
        let workdir: Option<Option<String>> =
            sqlx::query_scalar(crate::sql::worktrees::ACTIVE_WORKDIR.pg)
                .bind(child_session_key)
                .fetch_optional(&self.pool)
                .await?;
        Ok(workdir.flatten())
    }

    /// Worktrees left unfinished: being created, or active while their child's announce is
    /// already made.
    pub async fn orphan_worktrees(&self) -> Result<Vec<WorktreeRow>> {
        let rows = sqlx::query(crate::sql::worktrees::ORPHANS.pg)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(decode_worktree).collect()
    }
}
