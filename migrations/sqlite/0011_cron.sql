-- Scheduled jobs (SPEC §16): one durable table for the jobs of the config file (synced into
-- it on load and reload) and those added by the `cron` tool, the API or the CLI.
CREATE TABLE cron_jobs (
    id            TEXT PRIMARY KEY,
    source        TEXT NOT NULL,              -- config | tool | cli: a reload touches only 'config'
    spec          TEXT NOT NULL,              -- JSON job as written in cron.jobs[] (schedule, message, deliver, …)
    enabled       INTEGER NOT NULL,
    next_run_at   INTEGER,                    -- unix ms; NULL: not due (disabled, or a one-shot that ran)
    last_run_at   INTEGER,
    last_inbox_id INTEGER,                    -- the message of its last run: the job is running while it waits or its run is unfinished
    runs          INTEGER NOT NULL DEFAULT 0,
    skipped       INTEGER NOT NULL DEFAULT 0, -- came due while still running
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX cron_jobs_due ON cron_jobs(enabled, next_run_at);

-- Finding the run that took a job's message (claimed messages only: one row per inbound
-- message, not per transcript row).
CREATE INDEX messages_inbox ON messages(inbox_id) WHERE inbox_id IS NOT NULL;
