-- Sub-agent registry and durable timers (SPEC §7).

-- A run may carry its own model and timeout (sub-agent runs do).
ALTER TABLE runs ADD COLUMN timeout_ms INTEGER;

CREATE TABLE subagent_runs (
    run_id                TEXT PRIMARY KEY,     -- the child's first run (runs.id)
    child_session_key     TEXT NOT NULL,
    requester_session_key TEXT NOT NULL,
    requester_run_id      TEXT,
    requester_origin      TEXT,                 -- JSON Origin the announce goes to
    task                  TEXT NOT NULL,
    label                 TEXT,
    agent_id              TEXT NOT NULL,
    model                 TEXT,
    thinking              TEXT,
    cleanup               TEXT NOT NULL DEFAULT 'keep',   -- keep | delete
    run_timeout_seconds   INTEGER NOT NULL DEFAULT 0,
    created_at            INTEGER NOT NULL,
    ended_at              INTEGER,
    outcome               TEXT,                 -- success | error | timeout | cancelled | interrupted
    error                 TEXT,
    stop_note             TEXT,                 -- who stopped it (for the announce's Notes)
    announce_state        TEXT NOT NULL DEFAULT 'none', -- none | pending | queued | skipped | failed
    announce_attempts     INTEGER NOT NULL DEFAULT 0,
    archive_at            INTEGER,
    archived_at           INTEGER
);
CREATE INDEX subagent_runs_requester ON subagent_runs(requester_session_key, created_at);
CREATE INDEX subagent_runs_announce ON subagent_runs(announce_state);

CREATE TABLE timers (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    kind    TEXT NOT NULL,                      -- archive
    target  TEXT NOT NULL,                      -- what it acts on (child session key)
    due_at  INTEGER NOT NULL,
    UNIQUE (kind, target)
);
CREATE INDEX timers_due ON timers(due_at);
