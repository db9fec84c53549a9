-- The blocking `task` tool: the tool call of the requester's run that created this child
-- (NULL for a `sessions_spawn` child). A restarted requester run finds its child again by
-- (requester_run_id, task_call_id) instead of creating a second one; written in the spawn's
-- own transaction.
ALTER TABLE subagent_runs ADD COLUMN task_call_id TEXT;
CREATE UNIQUE INDEX subagent_runs_task_call
    ON subagent_runs (requester_run_id, task_call_id) WHERE task_call_id IS NOT NULL;
