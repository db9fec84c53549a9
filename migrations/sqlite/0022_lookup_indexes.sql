-- Lookups that read a whole table that grows with use (found by the store's plan check,
-- store/src/tests/plans.rs):
-- a child's registry row by its session: every turn of a child looks it up (its depth,
-- its thinking level, the progress tool, the approval gate) and its archive stamps it;
-- a burst of sub-agents slowed down as the registry grew (docs/performance.md);
CREATE INDEX subagent_runs_child ON subagent_runs (child_session_key);
-- the day's runs of every agent: the daily budget, checked as each run starts.
CREATE INDEX runs_created ON runs (created_at);
