-- A session's own model and thinking level, chosen from the chat with `/model` and
-- `/think` (NULL: the agent's default). They stay with the session row: `/new` starts
-- a session with the defaults.
ALTER TABLE sessions ADD COLUMN model_override TEXT;
ALTER TABLE sessions ADD COLUMN thinking_override TEXT;
