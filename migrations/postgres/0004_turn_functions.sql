-- A turn's writes as server-side functions: each store call that was a transaction of
-- several statements (the accept, the start, the accept-and-start, the run's end) is one
-- function call, sent in autocommit, so it is one round trip and its own transaction.
-- The statements inside are the ones the transactions ran, in the same order, with the
-- same gates; a function's statements each take a fresh snapshot under READ COMMITTED, as
-- the statements of the explicit transaction did, and an error rolls the whole call back.
-- Why functions and not data-modifying WITH chains: the start's claim must see the message
-- the accept inserted in the same call, and the run's end reads the waiting count after its
-- inbox delete; the parts of one WITH statement share one snapshot and see neither
-- (docs/postgres.md, "A turn's round trips"). A later migration that changes one of these
-- replaces it with CREATE OR REPLACE (migrations run under the migrator's advisory lock).

-- The accept: record the platform id as taken (when there is one), queue the message and,
-- with a run id, insert the queued run that takes it. The inbox id, or NULL (and nothing
-- stored) when the platform id was taken before: the dedupe insert comes first, and a
-- second accept of the same id waits for the first's commit and then inserts nothing.
CREATE OR REPLACE FUNCTION switchboard_accept(
    p_message_id TEXT, p_session_key TEXT, p_origin TEXT, p_origin_channel TEXT,
    p_origin_chat_id TEXT, p_origin_thread_id TEXT, p_sender_id TEXT, p_text TEXT,
    p_now BIGINT,
    p_run_id TEXT, p_run_session_key TEXT, p_run_session_id TEXT, p_agent_id TEXT,
    p_lane TEXT, p_claim TEXT, p_run_origin TEXT, p_run_origin_channel TEXT,
    p_run_origin_chat_id TEXT, p_run_origin_thread_id TEXT, p_model TEXT,
    p_timeout_ms BIGINT
) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    v_inbox BIGINT;
BEGIN
    IF p_message_id IS NOT NULL THEN
        INSERT INTO inbound_seen (channel, message_id, seen_at)
        VALUES (p_origin_channel, p_message_id, p_now)
        ON CONFLICT DO NOTHING;
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO inbox (session_key, origin, origin_channel, origin_chat_id, origin_thread_id,
        sender_id, text, created_at)
    VALUES (p_session_key, p_origin, p_origin_channel, p_origin_chat_id, p_origin_thread_id,
        p_sender_id, p_text, p_now)
    RETURNING id INTO v_inbox;
    IF p_run_id IS NOT NULL THEN
        INSERT INTO runs (id, session_key, session_id, agent_id, lane, claim, status, origin,
            origin_channel, origin_chat_id, origin_thread_id, model, timeout_ms, created_at)
        VALUES (p_run_id, p_run_session_key, p_run_session_id, p_agent_id, p_lane, p_claim,
            'queued', p_run_origin, p_run_origin_channel, p_run_origin_chat_id,
            p_run_origin_thread_id, p_model, p_timeout_ms, p_now);
    END IF;
    RETURN v_inbox;
END;
$$;

-- A claim: move up to p_limit waiting messages of a session (NULL: all of them), oldest
-- first, into the transcript of p_session_id as user messages of run p_run_id; the claimed
-- messages come back. The waiting rows are locked as they are read (FOR UPDATE): a second
-- claim of the same rows waits for this one and then finds them gone (the
-- messages_claim_inbox trigger deletes each claimed row), so a message is never claimed
-- twice. Called by switchboard_start_run and, on its own, by the store's claim_inbox.
CREATE OR REPLACE FUNCTION switchboard_claim(
    p_session_key TEXT, p_session_id TEXT, p_run_id TEXT, p_limit BIGINT, p_now BIGINT
) RETURNS TABLE (inbox_id BIGINT, origin TEXT, sender_id TEXT, content TEXT)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    -- PL/pgSQL rather than a SQL function: it keeps the statement's plan for the session,
    -- where a SQL function called from another function plans its body at every call.
    RETURN QUERY WITH c AS (
        INSERT INTO messages (session_id, run_id, role, content, created_at, inbox_id,
            origin, origin_channel, origin_chat_id, origin_thread_id, sender_id)
        SELECT p_session_id, p_run_id, 'user', i.text, p_now, i.id, i.origin,
            i.origin_channel, i.origin_chat_id, i.origin_thread_id, i.sender_id
        FROM (SELECT * FROM inbox AS w WHERE w.session_key = p_session_key
            ORDER BY w.id LIMIT p_limit FOR UPDATE) AS i
        ORDER BY i.id
        RETURNING messages.inbox_id, messages.origin, messages.sender_id, messages.content)
    SELECT c.inbox_id, c.origin, c.sender_id, c.content FROM c;
END;
$$;

-- The start: mark the run running (the UPDATE's row lock serializes two starts of one run,
-- and a run's end racing it), claim up to p_limit waiting messages of the session (NULL:
-- all of them; none at all unless p_claim) into the transcript, and read the transcript
-- back whole. No rows when the run is no longer queued or running (then nothing changed);
-- else, by `kind`: one 'start' row (started_at), a 'claim' row per claimed message
-- (inbox_id, origin, sender_id, content), a 'message' row per transcript message (the
-- columns of `messages` the store decodes), in that order.
CREATE OR REPLACE FUNCTION switchboard_start_run(
    p_id TEXT, p_session_key TEXT, p_session_id TEXT, p_model TEXT, p_claim BOOLEAN,
    p_limit BIGINT, p_now BIGINT
) RETURNS TABLE (
    kind TEXT, started_at BIGINT, seq BIGINT, session_id TEXT, run_id TEXT, role TEXT,
    content TEXT, tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, created_at BIGINT,
    inbox_id BIGINT, origin TEXT, sender_id TEXT
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_started BIGINT;
BEGIN
    UPDATE runs AS r SET status = 'running', started_at = COALESCE(r.started_at, p_now),
        session_id = p_session_id, model = COALESCE(r.model, p_model)
    WHERE r.id = p_id AND r.status IN ('queued', 'running')
    RETURNING r.started_at INTO v_started;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT 'start'::TEXT, v_started, NULL::BIGINT, NULL::TEXT, NULL::TEXT,
        NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::TEXT, NULL::BIGINT,
        NULL::BIGINT, NULL::TEXT, NULL::TEXT;
    IF p_claim THEN
        RETURN QUERY SELECT 'claim'::TEXT, NULL::BIGINT, NULL::BIGINT, NULL::TEXT,
            NULL::TEXT, NULL::TEXT, c.content, NULL::TEXT, NULL::TEXT, NULL::TEXT,
            NULL::BIGINT, c.inbox_id, c.origin, c.sender_id
        FROM switchboard_claim(p_session_key, p_session_id, p_id, p_limit, p_now) AS c;
    END IF;
    RETURN QUERY SELECT 'message'::TEXT, NULL::BIGINT, m.seq, m.session_id, m.run_id, m.role,
        m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.created_at, NULL::BIGINT,
        NULL::TEXT, NULL::TEXT
    FROM messages AS m WHERE m.session_id = p_session_id ORDER BY m.seq;
END;
$$;

-- The accept of a message whose run starts at once: switchboard_accept, then
-- switchboard_start_run of the run it inserted, in one transaction. No rows when the
-- platform id was taken before (nothing stored); else an 'accepted' row (inbox_id) and the
-- start's rows. The run was inserted by this call, queued and not yet visible to anyone
-- else, so its start always finds it; should it not, the call fails and stores nothing.
CREATE OR REPLACE FUNCTION switchboard_accept_and_start(
    p_message_id TEXT, p_session_key TEXT, p_origin TEXT, p_origin_channel TEXT,
    p_origin_chat_id TEXT, p_origin_thread_id TEXT, p_sender_id TEXT, p_text TEXT,
    p_now BIGINT,
    p_run_id TEXT, p_run_session_key TEXT, p_run_session_id TEXT, p_agent_id TEXT,
    p_lane TEXT, p_claim TEXT, p_run_origin TEXT, p_run_origin_channel TEXT,
    p_run_origin_chat_id TEXT, p_run_origin_thread_id TEXT, p_model TEXT,
    p_timeout_ms BIGINT, p_start_model TEXT, p_limit BIGINT
) RETURNS TABLE (
    kind TEXT, started_at BIGINT, seq BIGINT, session_id TEXT, run_id TEXT, role TEXT,
    content TEXT, tool_calls TEXT, tool_call_id TEXT, tool_name TEXT, created_at BIGINT,
    inbox_id BIGINT, origin TEXT, sender_id TEXT
) LANGUAGE plpgsql AS $$
DECLARE
    v_inbox BIGINT;
BEGIN
    v_inbox := switchboard_accept(p_message_id, p_session_key, p_origin, p_origin_channel,
        p_origin_chat_id, p_origin_thread_id, p_sender_id, p_text, p_now, p_run_id,
        p_run_session_key, p_run_session_id, p_agent_id, p_lane, p_claim, p_run_origin,
        p_run_origin_channel, p_run_origin_chat_id, p_run_origin_thread_id, p_model,
        p_timeout_ms);
    IF v_inbox IS NULL THEN
        RETURN;
    END IF;
    kind := 'accepted';
    inbox_id := v_inbox;
    RETURN NEXT;
    RETURN QUERY SELECT * FROM switchboard_start_run(p_run_id, p_run_session_key,
        p_run_session_id, p_start_model, TRUE, p_limit, p_now);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'run % inserted by this accept could not be started', p_run_id;
    END IF;
END;
$$;

-- A run's end: the run's UPDATE first, which gates the rest (no row: the run is no longer
-- queued or running, nothing is written and no row comes back); then its last message
-- (when p_msg_session_id is set), the dropped inbox (p_drop_inbox), the count of messages
-- still waiting (read after that delete), the reply in the outbox (p_deliver; key
-- p_reply_key) and the sub-agent registry with its archive timer. One row: waiting,
-- whether a child's end was recorded now (announce), whether a reply was queued.
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
    v_key TEXT;
    v_child TEXT;
    v_archive BIGINT;
    v_waiting BIGINT;
    v_queued BOOLEAN := FALSE;
    v_announce BOOLEAN := FALSE;
BEGIN
    UPDATE runs AS r SET status = p_status, error = p_error, model = COALESCE(p_model, r.model),
        steps = p_steps, input_tokens = p_input_tokens, output_tokens = p_output_tokens,
        cost_usd = p_cost_usd, reply = p_reply, ended_at = p_now
    WHERE r.id = p_id AND r.status IN ('queued', 'running')
    RETURNING r.session_key INTO v_key;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF p_msg_session_id IS NOT NULL THEN
        INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id,
            tool_name, created_at)
        VALUES (p_msg_session_id, p_id, p_msg_role, p_msg_content, p_msg_tool_calls,
            p_msg_tool_call_id, p_msg_tool_name, p_msg_created_at);
    END IF;
    IF p_drop_inbox THEN
        DELETE FROM inbox AS i WHERE i.session_key = v_key;
    END IF;
    SELECT COUNT(*) INTO v_waiting FROM inbox AS i WHERE i.session_key = v_key;
    IF p_deliver IS NOT NULL THEN
        -- To the chat of the newest message the run claimed, else the run's origin; never
        -- to the HTTP API channel, never for a run without an origin.
        INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, next_attempt_at,
            created_at)
        SELECT p_reply_key, o.channel, o.chat_id, o.thread_id, o.origin, p_deliver, p_now,
            p_now
        FROM (
            SELECT CASE WHEN m.seq IS NULL THEN r.origin_channel ELSE m.origin_channel END
                       AS channel,
                   CASE WHEN m.seq IS NULL THEN r.origin_chat_id ELSE m.origin_chat_id END
                       AS chat_id,
                   CASE WHEN m.seq IS NULL THEN r.origin_thread_id ELSE m.origin_thread_id END
                       AS thread_id,
                   CASE WHEN m.seq IS NULL THEN r.origin ELSE m.origin END AS origin
            FROM runs AS r LEFT JOIN messages AS m ON m.seq =
                (SELECT l.seq FROM messages AS l
                    WHERE l.session_id = r.session_id AND l.run_id = r.id
                        AND l.origin IS NOT NULL
                    ORDER BY l.seq DESC LIMIT 1)
            WHERE r.id = p_id AND r.origin IS NOT NULL) AS o
        WHERE o.channel <> p_api_channel
        ON CONFLICT (key) DO NOTHING;
        v_queued := FOUND;
    END IF;
    -- Only the first end of a child is recorded.
    UPDATE subagent_runs AS s SET outcome = p_outcome, error = COALESCE(p_error, s.error),
        ended_at = p_now, announce_state = 'pending', archive_at = p_archive_at
    WHERE s.run_id = p_id AND s.outcome IS NULL
    RETURNING s.child_session_key, s.archive_at INTO v_child, v_archive;
    IF FOUND THEN
        v_announce := TRUE;
        IF v_archive IS NOT NULL THEN
            INSERT INTO timers (kind, target, due_at) VALUES ('archive', v_child, v_archive)
            ON CONFLICT (kind, target) DO UPDATE SET due_at = excluded.due_at;
        END IF;
    END IF;
    RETURN QUERY SELECT v_waiting, v_announce, v_queued;
END;
$$;
