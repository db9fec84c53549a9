-- Agent tools (SPEC §15): exec approval requests answered in chat, and the executables
-- allowed for good with `allow-always`.

-- One request per tool call (a resumed run finds its request again by run + call id).
CREATE TABLE approval_requests (
    id           TEXT PRIMARY KEY,              -- short id the chat answers with
    run_id       TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    session_key  TEXT NOT NULL,                 -- the run's session
    agent_id     TEXT NOT NULL,
    label        TEXT,                          -- a sub-agent's label (or task), shown in the request
    channel      TEXT NOT NULL,                 -- the chat that may answer
    chat_id      TEXT NOT NULL,
    origin       TEXT NOT NULL,                 -- JSON Origin the request was posted to
    workdir      TEXT NOT NULL,
    command      TEXT NOT NULL,
    executables  TEXT NOT NULL,                 -- JSON [path]: what allow-always would allow
    status       TEXT NOT NULL DEFAULT 'pending', -- pending | allow-once | allow-always | denied | cancelled | expired
    decided_by   TEXT,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    resolved_at  INTEGER,
    UNIQUE (run_id, tool_call_id)
);
CREATE INDEX approval_requests_pending ON approval_requests(status, expires_at);

-- Executables an agent may run without asking (`allow-always`; `switchboard approvals`).
CREATE TABLE exec_allowlist (
    agent_id    TEXT NOT NULL,
    path        TEXT NOT NULL,                  -- resolved executable path
    approval_id TEXT,                           -- the request that added it
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (agent_id, path)
);
