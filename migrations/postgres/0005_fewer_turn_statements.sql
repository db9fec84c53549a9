-- Fewer statements per turn. Under load the server's time goes to each statement's
-- executor set-up more than to the work itself, so a turn's functions now run fewer,
-- larger statements, with the same writes, gates and answers (docs/postgres.md, "A turn's
-- statements"):
--
-- * switchboard_open_and_start: a message whose run starts at once, in the active session
--   of its key, which this same call finds, creates or re-points to the message's origin
--   (what the store's ensure_session did as a call of its own). Flat: no nested function
--   calls; the message and its run are one statement, the run inserted running (nobody
--   else can see it before the commit, so the UPDATE to running that the start made had
--   nothing to serialize); the claim and the transcript's read are one statement.
-- * switchboard_finish_run (same arguments, same answer): the run's UPDATE and its last
--   message in one statement, the waiting count and the reply's chat in one, the outbox
--   insert only when there is a chat to deliver to, the sub-agent registry only for a
--   run of the subagent lane (the only runs a registry row names), and the answer
--   without a SELECT.
--
-- switchboard_accept_and_start and the other 0004 functions stay as they are: the store
-- still calls them for a busy session's message, a queued run's start and a claim, and a
-- process of the previous build calls them during a rolling restart.

-- The active session of p_session_key (p_new_session_id when this call creates it; a
-- different p_origin replaces the stored one), then the accept of the message and the start
-- of its run p_run_id in that session, claiming up to p_limit waiting messages (NULL: all
-- of them). Rows, by `kind`: one 'session' row (the session's columns: id, key, agent_id,
-- origin as text, status, created_at, updated_at, archived_at), then, unless the platform
-- id p_message_id was taken before (then nothing but the session is stored, as when the
-- session was ensured on its own before the accept), an 'accepted' row (inbox_id), a
-- 'start' row (started_at), a 'claim' row per claimed message and a 'message' row per
-- transcript message, as switchboard_accept_and_start answers.
CREATE OR REPLACE FUNCTION switchboard_open_and_start(
    p_new_session_id TEXT, p_session_key TEXT, p_agent_id TEXT, p_message_id TEXT,
    p_origin TEXT, p_origin_channel TEXT, p_origin_chat_id TEXT, p_origin_thread_id TEXT,
    p_sender_id TEXT, p_text TEXT, p_now BIGINT,
    p_run_id TEXT, p_lane TEXT, p_claim TEXT, p_model TEXT, p_limit BIGINT
) RETURNS TABLE (
    kind TEXT, started_at BIGINT, seq BIGINT, session_id TEXT, run_id TEXT, role TEXT,
    content TEXT, tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, created_at BIGINT,
    inbox_id BIGINT, origin TEXT, sender_id TEXT,
    id TEXT, key TEXT, agent_id TEXT, status TEXT, updated_at BIGINT, archived_at BIGINT
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_origin JSONB := p_origin::jsonb;
    v_session sessions%ROWTYPE;
    v_inbox BIGINT;
    v_found BOOLEAN := FALSE;
BEGIN
    -- The session, as ensure_session finds it: an active row with this origin is read
    -- (the common case, one index lookup); one with another origin is updated; none is
    -- inserted. A row that changed between the read and the write (archived, or created
    -- by another writer) is looked for again, up to three times.
    FOR attempt IN 1..3 LOOP
        SELECT * INTO v_session FROM sessions AS s
        WHERE s.key = p_session_key AND s.status = 'active';
        IF NOT FOUND THEN
            INSERT INTO sessions AS s (id, key, agent_id, origin, status, created_at,
                updated_at)
            VALUES (p_new_session_id, p_session_key, p_agent_id, v_origin, 'active', p_now,
                p_now)
            ON CONFLICT (key) WHERE status = 'active' DO NOTHING
            RETURNING * INTO v_session;
        ELSIF v_origin IS NOT NULL AND v_session.origin IS DISTINCT FROM v_origin THEN
            UPDATE sessions AS s SET origin = v_origin, updated_at = p_now
            WHERE s.id = v_session.id AND s.status = 'active'
            RETURNING * INTO v_session;
        END IF;
        IF FOUND THEN
            v_found := TRUE;
            EXIT;
        END IF;
    END LOOP;
    IF NOT v_found THEN
        RAISE EXCEPTION 'no active session % after ensuring one', p_session_key;
    END IF;
    kind := 'session';
    id := v_session.id;
    key := v_session.key;
    agent_id := v_session.agent_id;
    origin := v_session.origin::text;
    status := v_session.status;
    created_at := v_session.created_at;
    updated_at := v_session.updated_at;
    archived_at := v_session.archived_at;
    RETURN NEXT;
    id := NULL;
    key := NULL;
    agent_id := NULL;
    origin := NULL;
    status := NULL;
    created_at := NULL;
    updated_at := NULL;
    archived_at := NULL;

    -- The accept: the dedupe insert first (a second accept of the same platform id waits
    -- for the first's commit, then inserts nothing and stores nothing more).
    IF p_message_id IS NOT NULL THEN
        INSERT INTO inbound_seen (channel, message_id, seen_at)
        VALUES (p_origin_channel, p_message_id, p_now)
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END IF;
    -- The message and its run, running from its insert (the row the accept and the start
    -- wrote in turn), in one statement.
    WITH i AS (
        INSERT INTO inbox (session_key, origin, origin_channel, origin_chat_id,
            origin_thread_id, sender_id, text, created_at)
        VALUES (p_session_key, p_origin, p_origin_channel, p_origin_chat_id,
            p_origin_thread_id, p_sender_id, p_text, p_now)
        RETURNING inbox.id),
    r AS (
        INSERT INTO runs (id, session_key, session_id, agent_id, lane, claim, status, origin,
            origin_channel, origin_chat_id, origin_thread_id, model, created_at, started_at)
        VALUES (p_run_id, p_session_key, v_session.id, p_agent_id, p_lane, p_claim,
            'running', p_origin, p_origin_channel, p_origin_chat_id, p_origin_thread_id,
            p_model, p_now, p_now))
    SELECT i.id INTO v_inbox FROM i;
    kind := 'accepted';
    inbox_id := v_inbox;
    RETURN NEXT;
    kind := 'start';
    inbox_id := NULL;
    started_at := p_now;
    RETURN NEXT;

    -- The claim and the transcript in one statement. Its parts share one snapshot, so the
    -- read of `messages` does not see the rows the claim inserts: those come from the
    -- claim's RETURNING instead, and the two together are the transcript a read after
    -- the claim would find. The waiting rows are locked as they are read (FOR UPDATE) and
    -- the messages_claim_inbox trigger deletes each claimed one.
    RETURN QUERY WITH c AS (
        INSERT INTO messages (session_id, run_id, role, content, created_at, inbox_id,
            origin, origin_channel, origin_chat_id, origin_thread_id, sender_id)
        SELECT v_session.id, p_run_id, 'user', i.text, p_now, i.id, i.origin,
            i.origin_channel, i.origin_chat_id, i.origin_thread_id, i.sender_id
        FROM (SELECT * FROM inbox AS w WHERE w.session_key = p_session_key
            ORDER BY w.id LIMIT p_limit FOR UPDATE) AS i
        ORDER BY i.id
        RETURNING messages.seq, messages.session_id, messages.run_id, messages.role,
            messages.content, messages.tool_calls, messages.tool_call_id,
            messages.tool_name, messages.created_at, messages.inbox_id, messages.origin,
            messages.sender_id)
    SELECT 'claim'::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT, NULL::TEXT, NULL::TEXT,
        c.content, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT, c.inbox_id, c.origin,
        c.sender_id, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT,
        NULL::BIGINT
    FROM c
    UNION ALL
    SELECT 'message'::TEXT, NULL::BIGINT, m.seq, m.session_id, m.run_id, m.role, m.content,
        m.tool_calls, m.tool_call_id, m.tool_name, m.created_at, NULL::BIGINT, NULL::TEXT,
        NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT,
        NULL::BIGINT
    FROM messages AS m WHERE m.session_id = v_session.id
    UNION ALL
    SELECT 'message'::TEXT, NULL::BIGINT, c.seq, c.session_id, c.run_id, c.role, c.content,
        c.tool_calls, c.tool_call_id, c.tool_name, c.created_at, NULL::BIGINT, NULL::TEXT,
        NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT,
        NULL::BIGINT
    FROM c;
END;
$$;

-- A run's end, as in 0004 (same arguments, same answer), in fewer statements: the run's
-- UPDATE and its last message are one statement (the message is inserted only for the row
-- the UPDATE returns, so the UPDATE still gates everything); then the dropped inbox; then
-- one read, after that delete, of the waiting count and of the newest message the run
-- claimed (the reply's chat); the outbox insert only when that chat, else the run's origin,
-- is not the HTTP API; the registry only for a run of the subagent lane.
CREATE OR REPLACE FUNCTION switchboard_finish_run(
    p_id TEXT, p_status TEXT, p_error TEXT, p_model TEXT, p_steps BIGINT,
    p_input_tokens BIGINT, p_output_tokens BIGINT, p_cost_usd DOUBLE PRECISION,
    p_reply TEXT, p_now BIGINT,
    p_msg_session_id TEXT, p_msg_role TEXT, p_msg_content TEXT, p_msg_tool_calls TEXT,
    p_msg_tool_call_id TEXT, p_msg_tool_name TEXT, p_msg_created_at BIGINT,
    p_drop_inbox BOOLEAN, p_deliver TEXT, p_reply_key TEXT, p_api_channel TEXT,
    p_outcome TEXT, p_archive_at BIGINT
) RETURNS TABLE (waiting BIGINT, announce BOOLEAN, reply_queued BOOLEAN)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_run RECORD;
    v_to RECORD;
    v_channel TEXT;
    v_chat TEXT;
    v_thread TEXT;
    v_origin TEXT;
    v_child TEXT;
    v_archive BIGINT;
BEGIN
    WITH u AS (
        UPDATE runs AS r SET status = p_status, error = p_error,
            model = COALESCE(p_model, r.model), steps = p_steps,
            input_tokens = p_input_tokens, output_tokens = p_output_tokens,
            cost_usd = p_cost_usd, reply = p_reply, ended_at = p_now
        WHERE r.id = p_id AND r.status IN ('queued', 'running')
        RETURNING r.session_key, r.session_id, r.lane, r.origin, r.origin_channel,
            r.origin_chat_id, r.origin_thread_id),
    last AS (
        INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id,
            tool_name, created_at)
        SELECT p_msg_session_id, p_id, p_msg_role, p_msg_content, p_msg_tool_calls,
            p_msg_tool_call_id, p_msg_tool_name, p_msg_created_at
        FROM u WHERE p_msg_session_id IS NOT NULL)
    SELECT u.* INTO v_run FROM u;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF p_drop_inbox THEN
        DELETE FROM inbox AS i WHERE i.session_key = v_run.session_key;
    END IF;
    -- After the delete (a fresh snapshot), so the count sees what is left. The chat: the
    -- newest message the run claimed; none when there is no reply to deliver, or the run
    -- has no origin (then nothing is delivered).
    SELECT (SELECT COUNT(*) FROM inbox AS i WHERE i.session_key = v_run.session_key)
               AS waiting,
           l.seq, l.origin_channel, l.origin_chat_id, l.origin_thread_id, l.origin
    INTO v_to
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
        SELECT m.seq, m.origin_channel, m.origin_chat_id, m.origin_thread_id, m.origin
        FROM messages AS m
        WHERE p_deliver IS NOT NULL AND v_run.origin IS NOT NULL
            AND m.session_id = v_run.session_id AND m.run_id = p_id
            AND m.origin IS NOT NULL
        ORDER BY m.seq DESC LIMIT 1) AS l ON TRUE;
    waiting := v_to.waiting;
    announce := FALSE;
    reply_queued := FALSE;
    IF p_deliver IS NOT NULL AND v_run.origin IS NOT NULL THEN
        -- To the chat of the newest message the run claimed, else the run's origin; never
        -- to the HTTP API channel.
        IF v_to.seq IS NULL THEN
            v_channel := v_run.origin_channel;
            v_chat := v_run.origin_chat_id;
            v_thread := v_run.origin_thread_id;
            v_origin := v_run.origin;
        ELSE
            v_channel := v_to.origin_channel;
            v_chat := v_to.origin_chat_id;
            v_thread := v_to.origin_thread_id;
            v_origin := v_to.origin;
        END IF;
        IF v_channel <> p_api_channel THEN
            INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text,
                next_attempt_at, created_at)
            VALUES (p_reply_key, v_channel, v_chat, v_thread, v_origin, p_deliver, p_now,
                p_now)
            ON CONFLICT (key) DO NOTHING;
            reply_queued := FOUND;
        END IF;
    END IF;
    -- Only the first end of a child is recorded. A registry row names a run of the
    -- subagent lane (the spawn inserts both), so no other run has one to update.
    IF v_run.lane = 'subagent' THEN
        UPDATE subagent_runs AS s SET outcome = p_outcome, error = COALESCE(p_error, s.error),
            ended_at = p_now, announce_state = 'pending', archive_at = p_archive_at
        WHERE s.run_id = p_id AND s.outcome IS NULL
        RETURNING s.child_session_key, s.archive_at INTO v_child, v_archive;
        IF FOUND THEN
            announce := TRUE;
            IF v_archive IS NOT NULL THEN
                INSERT INTO timers (kind, target, due_at) VALUES ('archive', v_child, v_archive)
                ON CONFLICT (kind, target) DO UPDATE SET due_at = excluded.due_at;
            END IF;
        END IF;
    END IF;
    RETURN NEXT;
END;
$$;
