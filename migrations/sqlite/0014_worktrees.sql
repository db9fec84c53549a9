-- Git-worktree isolation of sub-agents (`isolation: worktree`): one row per child that
-- asked for it, written before the worktree is created and before the child runs, so the
-- start-up sweep and a restarted child find it.
--   state: creating (row written, `git worktree add` not yet known to have worked)
--        | active   (the child works in `workdir`)
--        | fallback (no worktree: `reason` is no_git | not_a_repo | dirty_tree | create_failed)
--        | done     (finished: removed when clean, kept when dirty; `note` says which)
CREATE TABLE subagent_worktrees (
    run_id     TEXT PRIMARY KEY,
    child_session_key TEXT NOT NULL,
    state      TEXT NOT NULL,
    reason     TEXT,
    repo       TEXT,
    path       TEXT,
    workdir    TEXT,
    branch     TEXT,
    base       TEXT,
    note       TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX subagent_worktrees_child ON subagent_worktrees (child_session_key);
