-- The schema of migrations/sqlite/0001–0014 as it stands after 0014, in PostgreSQL.
-- One file: PostgreSQL is a fresh engine with no deployed databases, so there is no
-- history to replay. The translation rules are in docs/postgres.md; in short:
--   - times are unix milliseconds as the store writes them (BIGINT), never timestamptz;
--   - every SQLite INTEGER is BIGINT (the store reads them all as i64), REAL is DOUBLE PRECISION;
--   - AUTOINCREMENT ids are BIGSERIAL; tables whose queries broke ties by SQLite's implicit
--     rowid (sessions, runs, subagent_runs) get an explicit insertion counter `seq`;
--   - JSON stays TEXT (stored and read back as the store wrote it), except sessions.origin,
--     the one JSON column SQL looks into (JSONB);
--   - 0/1 columns become BOOLEAN only where the store already binds and reads a bool.

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,            -- sessionId (uuid); a /new makes a new one
    seq         BIGSERIAL NOT NULL,          -- insertion order: the tie-break of equal created_at
    key         TEXT NOT NULL,               -- sessionKey, e.g. agent:main:main
    agent_id    TEXT NOT NULL,
    origin      JSONB,                       -- Origin of the last inbound message (looked up by channel and chat)
    status      TEXT NOT NULL DEFAULT 'active', -- active | archived
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    archived_at BIGINT
);
-- At most one active session per key.
CREATE UNIQUE INDEX sessions_active_key ON sessions (key) WHERE status = 'active';
CREATE INDEX sessions_key ON sessions (key, created_at, seq);
-- The approval commands find a chat's latest session by its origin's channel and chat.
CREATE INDEX sessions_origin_chat ON sessions ((origin ->> 'channel'), (origin ->> 'chatId'), updated_at);

-- Messages that arrived for a session and are not yet part of its transcript (the session
-- was busy). A run claims them into `messages` when it starts (or, in steer mode, at its
-- next model call).
CREATE TABLE inbox (
    id               BIGSERIAL PRIMARY KEY,
    session_key      TEXT NOT NULL,
    origin           TEXT NOT NULL,          -- JSON Origin
    origin_channel   TEXT,
    origin_chat_id   TEXT,
    origin_thread_id TEXT,
    sender_id        TEXT NOT NULL,
    text             TEXT NOT NULL,
    created_at       BIGINT NOT NULL
);
CREATE INDEX inbox_session ON inbox (session_key, id);

CREATE TABLE messages (
    seq              BIGSERIAL PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id),
    run_id           TEXT,
    role             TEXT NOT NULL,          -- user | assistant | tool
    content          TEXT NOT NULL,
    tool_calls       TEXT,                   -- JSON [{id,name,arguments}] on assistant messages
    tool_call_id     TEXT,                   -- on tool messages
    tool_name        TEXT,                   -- on tool messages
    created_at       BIGINT NOT NULL,
    inbox_id         BIGINT,                 -- the inbox row this user message was claimed from
    origin           TEXT,                   -- JSON Origin of a claimed user message
    sender_id        TEXT,
    origin_channel   TEXT,
    origin_chat_id   TEXT,
    origin_thread_id TEXT
);
CREATE INDEX messages_session ON messages (session_id, seq);
-- Finding the run that took a cron job's message (claimed messages only).
CREATE INDEX messages_inbox ON messages (inbox_id) WHERE inbox_id IS NOT NULL;

-- Claiming a waiting message in one statement: the transcript row names the inbox row it
-- came from, and this trigger deletes that inbox row as part of the same INSERT (SQLite's
-- `messages_claim_inbox`, same name, same effect).
CREATE FUNCTION messages_claim_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM inbox WHERE id = NEW.inbox_id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER messages_claim_inbox AFTER INSERT ON messages
    FOR EACH ROW WHEN (NEW.inbox_id IS NOT NULL)
    EXECUTE FUNCTION messages_claim_inbox();

CREATE TABLE runs (
    id               TEXT PRIMARY KEY,
    seq              BIGSERIAL NOT NULL,     -- insertion order: the tie-break of equal created_at
    session_key      TEXT NOT NULL,
    session_id       TEXT NOT NULL,
    agent_id         TEXT NOT NULL,
    lane             TEXT NOT NULL,          -- main | subagent | cron
    claim            TEXT NOT NULL,          -- all | one: how many inbox messages it takes
    status           TEXT NOT NULL,          -- queued | running | succeeded | failed | timeout | cancelled | interrupted
    origin           TEXT,                   -- JSON Origin the reply goes to
    origin_channel   TEXT,
    origin_chat_id   TEXT,
    origin_thread_id TEXT,
    model            TEXT,
    timeout_ms       BIGINT,
    error            TEXT,
    steps            BIGINT NOT NULL DEFAULT 0,
    input_tokens     BIGINT NOT NULL DEFAULT 0,
    output_tokens    BIGINT NOT NULL DEFAULT 0,
    cost_usd         DOUBLE PRECISION,
    reply            TEXT,
    created_at       BIGINT NOT NULL,
    started_at       BIGINT,
    ended_at         BIGINT
);
CREATE INDEX runs_session ON runs (session_key, created_at, seq);
CREATE INDEX runs_status ON runs (status);

-- Everything that leaves for a channel goes through here, once per idempotency key.
CREATE TABLE outbox (
    id              BIGSERIAL PRIMARY KEY,
    key             TEXT NOT NULL UNIQUE,
    channel         TEXT NOT NULL,
    chat_id         TEXT,
    thread_id       TEXT,
    origin          TEXT NOT NULL,           -- JSON Origin, handed back to the adapter
    text            TEXT NOT NULL,
    footer          TEXT,                    -- the announce's Stats line, sent whole and last
    actions         TEXT,                    -- JSON [{label, id}]: buttons under the message
    state           TEXT NOT NULL DEFAULT 'pending', -- pending | sending | sent | failed
    attempts        BIGINT NOT NULL DEFAULT 0,
    parts_sent      BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    last_error      TEXT,
    created_at      BIGINT NOT NULL,
    sent_at         BIGINT
);
CREATE INDEX outbox_due ON outbox (state, next_attempt_at);
-- The rows that can hold back later rows of their chat.
CREATE INDEX outbox_chat ON outbox (channel, chat_id, thread_id, id)
    WHERE state IN ('pending', 'sending');

-- Sub-agent registry.
CREATE TABLE subagent_runs (
    run_id                TEXT PRIMARY KEY,  -- the child's first run (runs.id)
    seq                   BIGSERIAL NOT NULL, -- insertion order: the tie-break of equal created_at
    child_session_key     TEXT NOT NULL,
    requester_session_key TEXT NOT NULL,
    requester_run_id      TEXT,
    task_call_id          TEXT,              -- the `task` tool call that created it (NULL: sessions_spawn)
    requester_origin      TEXT,              -- JSON Origin the announce goes to
    requester_channel     TEXT,
    requester_chat_id     TEXT,
    requester_thread_id   TEXT,
    task                  TEXT NOT NULL,
    label                 TEXT,
    agent_id              TEXT NOT NULL,
    model                 TEXT,
    thinking              TEXT,
    cleanup               TEXT NOT NULL DEFAULT 'keep',   -- keep | delete
    run_timeout_seconds   BIGINT NOT NULL DEFAULT 0,
    created_at            BIGINT NOT NULL,
    ended_at              BIGINT,
    outcome               TEXT,              -- success | error | timeout | cancelled | interrupted
    error                 TEXT,
    stop_note             TEXT,              -- who stopped it (for the announce's Notes)
    announce_state        TEXT NOT NULL DEFAULT 'none', -- none | pending | queued | skipped | failed
    announce_attempts     BIGINT NOT NULL DEFAULT 0,
    announce_prompt_at    BIGINT,
    archive_at            BIGINT,
    archived_at           BIGINT
);
CREATE INDEX subagent_runs_requester ON subagent_runs (requester_session_key, created_at, seq);
CREATE INDEX subagent_runs_recent ON subagent_runs (created_at, seq);
CREATE INDEX subagent_runs_announce ON subagent_runs (announce_state);
CREATE UNIQUE INDEX subagent_runs_task_call
    ON subagent_runs (requester_run_id, task_call_id) WHERE task_call_id IS NOT NULL;

-- Durable timers.
CREATE TABLE timers (
    id     BIGSERIAL PRIMARY KEY,
    kind   TEXT NOT NULL,                    -- archive
    target TEXT NOT NULL,                    -- what it acts on (child session key)
    due_at BIGINT NOT NULL,
    UNIQUE (kind, target)
);
CREATE INDEX timers_due ON timers (due_at);

-- Channel support: adapter state (e.g. Telegram's update offset), inbound dedupe, pairing.
CREATE TABLE channel_state (
    channel    TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (channel, key)
);

-- Platform message ids already taken, so a redelivered update is not handled twice.
CREATE TABLE inbound_seen (
    channel    TEXT NOT NULL,
    message_id TEXT NOT NULL,
    seen_at    BIGINT NOT NULL,
    PRIMARY KEY (channel, message_id)
);

CREATE TABLE pairings (
    channel     TEXT NOT NULL,
    sender_id   TEXT NOT NULL,
    sender_name TEXT,
    code        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending',  -- pending | approved
    created_at  BIGINT NOT NULL,
    notified_at BIGINT NOT NULL,
    approved_at BIGINT,
    PRIMARY KEY (channel, sender_id)
);
CREATE UNIQUE INDEX pairings_code ON pairings (channel, code);

-- Inbound updates (Telegram's update ids): attempts at handling each one not yet done with.
CREATE TABLE inbound_attempts (
    channel   TEXT NOT NULL,
    update_id BIGINT NOT NULL,
    attempts  BIGINT NOT NULL,
    first_at  BIGINT NOT NULL,
    last_at   BIGINT NOT NULL,
    PRIMARY KEY (channel, update_id)
);

-- Updates whose handling failed too often: skipped for good, kept for whoever investigates.
CREATE TABLE inbound_poisoned (
    channel     TEXT NOT NULL,
    update_id   BIGINT NOT NULL,
    attempts    BIGINT NOT NULL,
    reason      TEXT NOT NULL,
    summary     TEXT NOT NULL,
    payload     TEXT NOT NULL,
    poisoned_at BIGINT NOT NULL,
    PRIMARY KEY (channel, update_id)
);

-- Exec approval requests answered in chat; one per tool call.
CREATE TABLE approval_requests (
    id           TEXT PRIMARY KEY,           -- short id the chat answers with
    run_id       TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    session_key  TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    label        TEXT,
    channel      TEXT NOT NULL,              -- the chat that may answer
    chat_id      TEXT NOT NULL,
    origin       TEXT NOT NULL,              -- JSON Origin the request was posted to
    workdir      TEXT NOT NULL,
    command      TEXT NOT NULL,
    executables  TEXT NOT NULL,              -- JSON [path]: what allow-always would allow
    status       TEXT NOT NULL DEFAULT 'pending', -- pending | allow-once | allow-always | denied | cancelled | expired
    decided_by   TEXT,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    resolved_at  BIGINT,
    UNIQUE (run_id, tool_call_id)
);
CREATE INDEX approval_requests_pending ON approval_requests (status, expires_at);

-- Executables an agent may run without asking (`allow-always`).
CREATE TABLE exec_allowlist (
    agent_id    TEXT NOT NULL,
    path        TEXT NOT NULL,               -- resolved executable path
    approval_id TEXT,                        -- the request that added it
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (agent_id, path)
);

-- Scheduled jobs: those of the config file and those added by the tool, the API or the CLI.
CREATE TABLE cron_jobs (
    id            TEXT PRIMARY KEY,
    source        TEXT NOT NULL,             -- config | tool | cli
    spec          TEXT NOT NULL,             -- JSON job as written in cron.jobs[]
    enabled       BOOLEAN NOT NULL,          -- the store binds and reads a bool (`WHERE enabled`)
    next_run_at   BIGINT,                    -- NULL: not due (disabled, or a one-shot that ran)
    last_run_at   BIGINT,
    last_inbox_id BIGINT,                    -- the message of its last run
    runs          BIGINT NOT NULL DEFAULT 0,
    skipped       BIGINT NOT NULL DEFAULT 0, -- came due while still running
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX cron_jobs_due ON cron_jobs (enabled, next_run_at);

-- Git-worktree isolation of sub-agents: state creating | active | fallback | done.
CREATE TABLE subagent_worktrees (
    run_id            TEXT PRIMARY KEY,
    child_session_key TEXT NOT NULL,
    state             TEXT NOT NULL,
    reason            TEXT,
    repo              TEXT,
    path              TEXT,
    workdir           TEXT,
    branch            TEXT,
    base              TEXT,
    note              TEXT,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX subagent_worktrees_child ON subagent_worktrees (child_session_key);
