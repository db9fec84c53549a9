-- Core tables: sessions, transcripts, pending inbound messages, runs, outbox.
-- Times are unix milliseconds (INTEGER). JSON columns hold serde_json text.

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,            -- sessionId (uuid); a /new makes a new one
    key         TEXT NOT NULL,               -- sessionKey, e.g. agent:main:main
    agent_id    TEXT NOT NULL,
    origin      TEXT,                        -- JSON Origin of the last inbound message
    status      TEXT NOT NULL DEFAULT 'active', -- active | archived
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    archived_at INTEGER
);
-- At most one active session per key.
CREATE UNIQUE INDEX sessions_active_key ON sessions(key) WHERE status = 'active';
CREATE INDEX sessions_key ON sessions(key);

CREATE TABLE messages (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL REFERENCES sessions(id),
    run_id       TEXT,
    role         TEXT NOT NULL,              -- user | assistant | tool
    content      TEXT NOT NULL,
    tool_calls   TEXT,                       -- JSON [{id,name,arguments}] on assistant messages
    tool_call_id TEXT,                       -- on tool messages
    tool_name    TEXT,                       -- on tool messages
    created_at   INTEGER NOT NULL
);
CREATE INDEX messages_session ON messages(session_id, seq);

-- Messages that arrived for a session and are not yet part of its transcript
-- (the session was busy). A run claims them into `messages` when it starts (or, in
-- steer mode, at its next model call).
CREATE TABLE inbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT NOT NULL,
    origin      TEXT NOT NULL,
    sender_id   TEXT NOT NULL,
    text        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX inbox_session ON inbox(session_key, id);

CREATE TABLE runs (
    id            TEXT PRIMARY KEY,
    session_key   TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    agent_id      TEXT NOT NULL,
    lane          TEXT NOT NULL,             -- main | subagent | cron
    claim         TEXT NOT NULL,             -- all | one: how many inbox messages it takes
    status        TEXT NOT NULL,             -- queued | running | succeeded | failed | timeout | cancelled | interrupted
    origin        TEXT,                      -- JSON Origin the reply goes to
    model         TEXT,
    error         TEXT,
    steps         INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL,
    reply         TEXT,
    created_at    INTEGER NOT NULL,
    started_at    INTEGER,
    ended_at      INTEGER
);
CREATE INDEX runs_session ON runs(session_key, created_at);
CREATE INDEX runs_status ON runs(status);

-- Everything that leaves for a channel goes through here, once per idempotency key.
CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    key             TEXT NOT NULL UNIQUE,
    channel         TEXT NOT NULL,
    origin          TEXT NOT NULL,
    text            TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending', -- pending | sending | sent | failed
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT,
    created_at      INTEGER NOT NULL,
    sent_at         INTEGER
);
CREATE INDEX outbox_due ON outbox(state, next_attempt_at);
