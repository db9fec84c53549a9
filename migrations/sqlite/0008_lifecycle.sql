-- The run and sub-agent lifecycle across restarts and stops.
-- When the announce prompt was stored in the child's transcript: the announce step asks it
-- once, however often the step is retried or cut short by a restart.
ALTER TABLE subagent_runs ADD COLUMN announce_prompt_at INTEGER;
