-- Delivery and inbound hardening.
--
-- Outbox: how many leading parts of a split message were delivered (a retry resumes after
-- them), and the chat of each row as columns, so "no row of a chat is sent while an
-- earlier row of that chat is pending or sending" is a plain indexed lookup. Rows inserted
-- without the chat (the run-end and announce scripts copy a stored origin) get it from
-- their origin once, at insert, by the trigger.
ALTER TABLE outbox ADD COLUMN parts_sent INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN chat_id TEXT;
ALTER TABLE outbox ADD COLUMN thread_id TEXT;

UPDATE outbox SET chat_id = json_extract(origin, '$.chatId'),
                  thread_id = json_extract(origin, '$.threadId');

CREATE TRIGGER outbox_chat AFTER INSERT ON outbox
WHEN NEW.chat_id IS NULL
BEGIN
    UPDATE outbox SET chat_id = json_extract(NEW.origin, '$.chatId'),
                      thread_id = json_extract(NEW.origin, '$.threadId')
        WHERE id = NEW.id;
END;

-- The rows that can hold back later rows of their chat.
CREATE INDEX outbox_chat ON outbox(channel, chat_id, thread_id, id)
    WHERE state IN ('pending', 'sending');

-- Inbound updates (Telegram's update ids): attempts at handling each one not yet done
-- with, counted before it is handled, so an attempt that kills the adapter still counts.
CREATE TABLE inbound_attempts (
    channel    TEXT NOT NULL,
    update_id  INTEGER NOT NULL,
    attempts   INTEGER NOT NULL,
    first_at   INTEGER NOT NULL,
    last_at    INTEGER NOT NULL,
    PRIMARY KEY (channel, update_id)
);

-- Updates whose handling failed too often: skipped for good, kept for whoever investigates.
CREATE TABLE inbound_poisoned (
    channel     TEXT NOT NULL,
    update_id   INTEGER NOT NULL,
    attempts    INTEGER NOT NULL,
    reason      TEXT NOT NULL,
    summary     TEXT NOT NULL,
    payload     TEXT NOT NULL,
    poisoned_at INTEGER NOT NULL,
    PRIMARY KEY (channel, update_id)
);
