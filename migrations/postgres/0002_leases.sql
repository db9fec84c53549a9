-- Leases: several gateway processes on one database. Work that one process does at a
-- time is held under a lease with an expiry; a process renews its leases while it works,
-- and when it dies (SIGKILL, a lost host) another process takes the work over once the
-- lease has expired (`storage.leaseTimeout`). Design and the statements that use these
-- columns: docs/postgres.md, "Leases".
--
-- Lease times are written and compared with the database server's clock
-- (`switchboard_now_ms()`), never a process's own, so clock skew between hosts cannot
-- hand one piece of work to two processes.

CREATE FUNCTION switchboard_now_ms() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT
$$;

-- Rows claimed one at a time (`FOR UPDATE SKIP LOCKED`): a run being run, an outbox row
-- being sent, a timer being fired. lease_owner is the holding process's id; both columns
-- are NULL while nobody holds the row. Renewal and release find a process's rows by owner;
-- takeover finds expired leases by expiry. Unleased work is found by the tables' own
-- indexes (runs_status, outbox_due, timers_due).
ALTER TABLE runs ADD COLUMN lease_owner TEXT;
ALTER TABLE runs ADD COLUMN lease_expires_at BIGINT;
CREATE INDEX runs_lease_owner ON runs (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX runs_lease_expiry ON runs (lease_expires_at) WHERE lease_owner IS NOT NULL;

ALTER TABLE outbox ADD COLUMN lease_owner TEXT;
ALTER TABLE outbox ADD COLUMN lease_expires_at BIGINT;
CREATE INDEX outbox_lease_owner ON outbox (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX outbox_lease_expiry ON outbox (lease_expires_at) WHERE lease_owner IS NOT NULL;

ALTER TABLE timers ADD COLUMN lease_owner TEXT;
ALTER TABLE timers ADD COLUMN lease_expires_at BIGINT;
CREATE INDEX timers_lease_owner ON timers (lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX timers_lease_expiry ON timers (lease_expires_at) WHERE lease_owner IS NOT NULL;

-- Things exactly one process holds for as long as it lives: a channel connection
-- (`channel:telegram:<account>`, `channel:discord:<account>`; one Telegram poller, one
-- Discord gateway session) and the cron scheduler (`cron`).
--   fence: raised by one at every change of holder. The holder writes what the next holder
--   depends on (Telegram's update offset) only while its fence is still the lease's, so a
--   process that lost its lease without knowing cannot move the offset back.
CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,               -- the holding process's id
    fence       BIGINT NOT NULL DEFAULT 1,
    acquired_at BIGINT NOT NULL,             -- when this holder took it (database clock, ms)
    renewed_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL
);
-- What a process holds (status, metrics, release at shutdown).
CREATE INDEX leases_owner ON leases (owner);
