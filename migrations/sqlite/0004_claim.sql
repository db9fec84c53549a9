-- Claiming a waiting message in one statement: the transcript row names the inbox row it
-- came from, and this trigger deletes that inbox row as part of the same INSERT, so the
-- move is atomic without a transaction (one round trip to the database instead of five).
ALTER TABLE messages ADD COLUMN inbox_id INTEGER;

CREATE TRIGGER messages_claim_inbox AFTER INSERT ON messages
WHEN NEW.inbox_id IS NOT NULL
BEGIN
    DELETE FROM inbox WHERE id = NEW.inbox_id;
END;
