-- A session's compactions (docs/context.md): the older part of a transcript summarized by
-- the model. One row is the whole compaction — the summary and the marker of the rows it
-- replaces (every message of the session with `seq <= through_seq`) — so it is committed
-- in one statement, after the summary arrived: a crash before leaves the transcript as
-- it was. The messages themselves are never touched (`/subagents log`, the API and
-- `/control` still list them); a run reads the newest compaction in their place.
CREATE TABLE compactions (
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    through_seq   BIGINT NOT NULL,             -- the last message this summary stands for
    summary       TEXT NOT NULL,
    replaced      BIGINT NOT NULL,             -- messages summarized (this time)
    tokens_before BIGINT NOT NULL,             -- estimated tokens of what it replaced
    tokens_after  BIGINT NOT NULL,             -- estimated tokens of the summary
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (session_id, through_seq)
);
