-- Sub-agents' progress lines (the `progress` tool): the one message per child that the
-- requester's chat shows and every later call edits. Written once the first post
-- succeeded (and again after each edit), so a restarted gateway edits the same message
-- instead of posting another.
CREATE TABLE progress_lines (
    child_session_key TEXT PRIMARY KEY,
    channel    TEXT NOT NULL,
    chat_id    TEXT NOT NULL,
    thread_id  TEXT,
    message_id TEXT NOT NULL,   -- the platform's id of the message (the web chat: its key)
    text       TEXT NOT NULL,   -- the text it shows
    updated_at INTEGER NOT NULL -- when it was last posted or edited (ms since the epoch)
);
