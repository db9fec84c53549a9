-- A file sent with an outbox message (the agent's `message` tool with `path`): JSON
-- {path, name, mime, kind, size} of the gateway's own copy under <state dir>/media/out/,
-- read by the adapter at delivery. NULL: no file.
ALTER TABLE outbox ADD COLUMN file TEXT;
