//! Sub-agent worktrees' statements (`subagent_worktrees`), the same on both engines.

use super::{sql, Sql};

/// Record a worktree once per run: run_id, child_session_key, state, reason, repo, path,
/// workdir, branch, base, note, now.
pub(crate) const RECORD: Sql = sql!(
    "INSERT INTO subagent_worktrees (run_id, child_session_key, state, reason, repo,
         path, workdir, branch, base, note, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)
     ON CONFLICT (run_id) DO NOTHING"
);

/// Move to a state, keeping the reason and note unless given: state, reason, note, now,
/// run_id.
pub(crate) const SET_STATE: Sql = sql!(
    "UPDATE subagent_worktrees SET state = $1, reason = COALESCE($2, reason),
         note = COALESCE($3, note), updated_at = $4
     WHERE run_id = $5"
);

/// A run's worktree: run_id.
pub(crate) const BY_RUN: Sql = sql!("SELECT * FROM subagent_worktrees WHERE run_id = $1");

/// The active worktree's directory of a child session: child_session_key.
pub(crate) const ACTIVE_WORKDIR: Sql = sql!(
    "SELECT workdir FROM subagent_worktrees
     WHERE child_session_key = $1 AND state = 'active'"
);

/// Worktrees left unfinished: being created, or active after the child's announce.
pub(crate) const ORPHANS: Sql = sql!(
    "SELECT w.* FROM subagent_worktrees w
     LEFT JOIN subagent_runs s ON s.run_id = w.run_id
     WHERE w.state = 'creating'
        OR (w.state = 'active'
            AND (s.run_id IS NULL OR s.announce_state IN ('queued', 'skipped', 'failed')))"
);
