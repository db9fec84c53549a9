-- Shared mode (`storage.processes: "shared"`): several active processes on one database.
-- A process in shared mode opens its connections with two settings, in the connection's
-- startup packet (no statement): `switchboard.lease_owner` (its owner id) and
-- `switchboard.lease_ms` (`storage.leaseTimeout`). The triggers below lease a run to the
-- process that queues or starts it, and an outbox row to the process that sends it, in the
-- same statement as the change, so no path that writes a run or claims a message can
-- forget the lease; its keeper renews them with its process lease (`renew_process`).
-- The triggers exist only in shared mode (`switchboard_shared_mode`, at the end).
-- Design: docs/postgres.md, "Shared mode".

CREATE FUNCTION switchboard_lease_owner() RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT NULLIF(current_setting('switchboard.lease_owner', true), '')
$$;

CREATE FUNCTION switchboard_lease_expiry() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$
    SELECT switchboard_now_ms() + current_setting('switchboard.lease_ms')::BIGINT
$$;

-- A run queued or started is leased to the process doing it; a run that ends loses its
-- lease. One session's runs run one at a time across processes: a run starts only while
-- no other run of its session runs under another process's live lease (the session's row
-- is locked for the check, so two starts of one session are serialized); otherwise the
-- start fails with SQLSTATE SB001 and the caller waits for the other run.
CREATE FUNCTION switchboard_lease_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    me TEXT := switchboard_lease_owner();
BEGIN
    IF NEW.status NOT IN ('queued', 'running') THEN
        NEW.lease_owner := NULL;
        NEW.lease_expires_at := NULL;
        RETURN NEW;
    END IF;
    IF NEW.status = 'running' THEN
        PERFORM 1 FROM sessions WHERE key = NEW.session_key FOR UPDATE;
        IF EXISTS (SELECT 1 FROM runs
                    WHERE session_key = NEW.session_key AND status = 'running'
                      AND id <> NEW.id AND lease_owner IS DISTINCT FROM me
                      AND lease_expires_at >= switchboard_now_ms()) THEN
            RAISE EXCEPTION 'session % has a run on another process', NEW.session_key
                USING ERRCODE = 'SB001';
        END IF;
    END IF;
    NEW.lease_owner := me;
    NEW.lease_expires_at := switchboard_lease_expiry();
    RETURN NEW;
END
$$;


-- An outbox row being sent is leased to the sending process; any other state clears it.
-- A row whose sender died goes back to pending once its lease expired
-- (`release_orphan_outbox`), and is sent after its delivered parts.
CREATE FUNCTION switchboard_lease_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state = 'sending' THEN
        NEW.lease_owner := switchboard_lease_owner();
        NEW.lease_expires_at := switchboard_lease_expiry();
    ELSE
        NEW.lease_owner := NULL;
        NEW.lease_expires_at := NULL;
    END IF;
    RETURN NEW;
END
$$;

-- The triggers exist only while the database is in shared mode: even a trigger whose WHEN
-- clause is false costs every INSERT and UPDATE of its table a few microseconds of the
-- server's CPU, which standby mode's turn need not pay. A shared-mode process creates them
-- at start (`switchboard_shared_mode(true)`), a standby-mode process drops them once it
-- holds the `gateway` lease (`false`); the two modes never act on one database at once.
-- Idempotent, under an advisory lock, so processes starting together do not race.
CREATE FUNCTION switchboard_shared_mode(shared BOOLEAN) RETURNS VOID LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(8314257835775062529); -- 'sb-shar' and a version byte
    IF NOT shared THEN
        DROP TRIGGER IF EXISTS runs_lease_insert ON runs;
        DROP TRIGGER IF EXISTS runs_lease_status ON runs;
        DROP TRIGGER IF EXISTS outbox_lease_state ON outbox;
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'outbox_lease_state') THEN
        RETURN;
    END IF;
    -- Connections without the settings (the CLI) skip them in the WHEN clause.
    CREATE TRIGGER runs_lease_insert BEFORE INSERT ON runs FOR EACH ROW
        WHEN (switchboard_lease_owner() IS NOT NULL)
        EXECUTE FUNCTION switchboard_lease_run();
    CREATE TRIGGER runs_lease_status BEFORE UPDATE OF status ON runs FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status AND switchboard_lease_owner() IS NOT NULL)
        EXECUTE FUNCTION switchboard_lease_run();
    CREATE TRIGGER outbox_lease_state BEFORE UPDATE OF state ON outbox FOR EACH ROW
        WHEN (OLD.state IS DISTINCT FROM NEW.state AND switchboard_lease_owner() IS NOT NULL)
        EXECUTE FUNCTION switchboard_lease_outbox();
END
$$;
