-- Channel support: adapter state (e.g. Telegram's update offset), inbound dedupe, and
-- pairing of unknown direct-message senders.

CREATE TABLE channel_state (
    channel    TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (channel, key)
);

-- Platform message ids already taken, so a redelivered update is not handled twice.
CREATE TABLE inbound_seen (
    channel    TEXT NOT NULL,
    message_id TEXT NOT NULL,
    seen_at    INTEGER NOT NULL,
    PRIMARY KEY (channel, message_id)
);

CREATE TABLE pairings (
    channel          TEXT NOT NULL,
    sender_id        TEXT NOT NULL,
    sender_name      TEXT,
    code             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending',  -- pending | approved
    created_at       INTEGER NOT NULL,
    notified_at      INTEGER NOT NULL,
    approved_at      INTEGER,
    PRIMARY KEY (channel, sender_id)
);
CREATE UNIQUE INDEX pairings_code ON pairings(channel, code);
