-- The channel contract in the store.
--
-- An outbox row's footer (the announce's `Stats:` line) is its own column, sent whole and
-- last by every adapter; nothing finds it in the text any more.
ALTER TABLE outbox ADD COLUMN footer TEXT;

-- Where SQL needs an origin's channel, chat and thread (the run-end and announce scripts
-- fill the outbox's channel and chat columns from them), they are columns bound from Rust
-- when the row is written, not fields of the origin's JSON read by SQL. The JSON stays:
-- it is what the adapters get back.
ALTER TABLE inbox ADD COLUMN origin_channel TEXT;
ALTER TABLE inbox ADD COLUMN origin_chat_id TEXT;
ALTER TABLE inbox ADD COLUMN origin_thread_id TEXT;
ALTER TABLE messages ADD COLUMN origin_channel TEXT;
ALTER TABLE messages ADD COLUMN origin_chat_id TEXT;
ALTER TABLE messages ADD COLUMN origin_thread_id TEXT;
ALTER TABLE runs ADD COLUMN origin_channel TEXT;
ALTER TABLE runs ADD COLUMN origin_chat_id TEXT;
ALTER TABLE runs ADD COLUMN origin_thread_id TEXT;
ALTER TABLE subagent_runs ADD COLUMN requester_channel TEXT;
ALTER TABLE subagent_runs ADD COLUMN requester_chat_id TEXT;
ALTER TABLE subagent_runs ADD COLUMN requester_thread_id TEXT;

-- Rows written before: their origin read once, here.
UPDATE inbox SET origin_channel = json_extract(origin, '$.channel'),
                 origin_chat_id = json_extract(origin, '$.chatId'),
                 origin_thread_id = json_extract(origin, '$.threadId');
UPDATE messages SET origin_channel = json_extract(origin, '$.channel'),
                    origin_chat_id = json_extract(origin, '$.chatId'),
                    origin_thread_id = json_extract(origin, '$.threadId')
    WHERE origin IS NOT NULL;
UPDATE runs SET origin_channel = json_extract(origin, '$.channel'),
                origin_chat_id = json_extract(origin, '$.chatId'),
                origin_thread_id = json_extract(origin, '$.threadId')
    WHERE origin IS NOT NULL;
UPDATE subagent_runs SET requester_channel = json_extract(requester_origin, '$.channel'),
                         requester_chat_id = json_extract(requester_origin, '$.chatId'),
                         requester_thread_id = json_extract(requester_origin, '$.threadId')
    WHERE requester_origin IS NOT NULL;

-- Every outbox INSERT now names the row's chat itself.
DROP TRIGGER outbox_chat;
