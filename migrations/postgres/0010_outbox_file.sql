-- SQLite's 0019: a file sent with an outbox message (JSON {path, name, mime, kind, size}
-- of the gateway's copy under <state dir>/media/out/). NULL: no file.
ALTER TABLE outbox ADD COLUMN file TEXT;
