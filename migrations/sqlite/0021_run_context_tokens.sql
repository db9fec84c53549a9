-- The prompt tokens of a run's latest model call: how full the model's context window
-- was, for `/usage` and `/status` (NULL until the run's first call answers). And the
-- index of the day's spending of an agent (`/usage`, `agents.defaults.budget.dailyUsd`).
ALTER TABLE runs ADD COLUMN context_tokens INTEGER;
CREATE INDEX runs_agent_created ON runs (agent_id, created_at);
