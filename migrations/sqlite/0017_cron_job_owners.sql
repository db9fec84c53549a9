-- A job the `cron` tool makes belongs to the chat that made it and runs in a session of
-- its own; the agent's main session only when the run that made it was in it. Jobs made
-- before this rule do not say which session made them, so those that asked for the main
-- session run in their own session from now on (the operator's jobs are untouched).
UPDATE cron_jobs
   SET spec = json_set(spec, '$.session', 'isolated')
 WHERE source = 'tool' AND json_extract(spec, '$.session') = 'main';
