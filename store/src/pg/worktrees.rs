//! Sub-agent worktrees on PostgreSQL (`subagent_worktrees`): where a child isolated in its
//! own git worktree works, recorded before the worktree is made and before the child runs.

use super::super::worktrees::decode_worktree;
use super::super::{now_ms, Result, WorktreeRow, WorktreeState};
use super::Pg;

impl Pg {
    /// Record a child's worktree (or why it has none). The row of a run is written once.
    pub async fn record_worktree(&self, w: &WorktreeRow) -> Result<()> {
        sqlx::query(
            "INSERT INTO subagent_worktrees (run_id, child_session_key, state, reason, repo,
                 path, workdir, branch, base, note, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
             ON CONFLICT (run_id) DO NOTHING",
        )
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
        sqlx::query(
            "UPDATE subagent_worktrees SET state = $1, reason = COALESCE($2, reason),
                 note = COALESCE($3, note), updated_at = $4
             WHERE run_id = $5",
        )
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
        let r = sqlx::query("SELECT * FROM subagent_worktrees WHERE run_id = $1")
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await?;
        r.as_ref().map(decode_worktree).transpose()
    }

    /// The directory a child session works in, when it has an active worktree.
    pub async fn worktree_workdir(&self, child_session_key: &str) -> Result<Option<String>> {
        let workdir: Option<Option<String>> = sqlx::query_scalar(
            "SELECT workdir FROM subagent_worktrees
             WHERE child_session_key = $1 AND state = 'active'",
        )
        .bind(child_session_key)
        .fetch_optional(&self.pool)
        .await?;
        Ok(workdir.flatten())
    }

    /// Worktrees left unfinished: being created, or active while their child's announce is
    /// already made.
    pub async fn orphan_worktrees(&self) -> Result<Vec<WorktreeRow>> {
        let rows = sqlx::query(
            "SELECT w.* FROM subagent_worktrees w
                 LEFT JOIN subagent_runs s ON s.run_id = w.run_id
             WHERE w.state = 'creating'
                OR (w.state = 'active'
                    AND (s.run_id IS NULL OR s.announce_state IN ('queued', 'skipped', 'failed')))",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(decode_worktree).collect()
    }
}
