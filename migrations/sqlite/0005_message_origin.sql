-- Where a user message came from and who sent it, kept on the transcript row when a run
-- claims it from the inbox: the claim's one statement then reports everything the run
-- needs (`RETURNING`), with no read of the inbox before it.
ALTER TABLE messages ADD COLUMN origin TEXT;
ALTER TABLE messages ADD COLUMN sender_id TEXT;
