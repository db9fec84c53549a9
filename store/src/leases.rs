//! Named leases (both engines): a thing exactly one process holds at a time — today the
//! whole gateway (`gateway`), later each channel connection and the cron scheduler. A lease
//! has an owner (a process's id), a fence (raised by one at every change of holder) and an
//! expiry on the database's clock; see docs/postgres.md, "Leases".

use std::time::Duration;

use super::engine::engine_fns;
use super::Result;

/// The lease of the active process: the one process that acts on a database.
pub const GATEWAY_LEASE: &str = "gateway";

/// The lease of one process in shared mode (`storage.processes: "shared"`): `process:` and
/// its owner id. While it lives, so do the process's other leases and its rows' leases,
/// all renewed with it by [`Store::renew_process`].
pub fn process_lease(owner: &str) -> String {
    format!("process:{owner}")
}

/// A lease as the database holds it. Times are unix ms on the database's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub name: String,
    /// The holding process's id.
    pub owner: String,
    /// Raised by one at every change of holder: what a holder writes under its fence is
    /// refused once another process has taken the lease.
    pub fence: i64,
    /// When this holder took it.
    pub acquired_at: i64,
    /// Its last renewal (or the acquisition).
    pub renewed_at: i64,
    /// Past this, the lease is free for anyone (a released lease has an expiry in the past).
    pub expires_at: i64,
}

engine_fns! {
    /// Take `name` for `owner` for `ttl` when it is free or expired (the fence rises when
    /// the holder changes), or renew it when `owner` holds it; `None` while another owner
    /// holds it. One atomic step: two acquirers never both get it.
    pub async fn acquire_lease(&self, name: &str, owner: &str, ttl: Duration) -> Result<Option<Lease>>;
    /// Extend `owner`'s hold on `name` by `ttl` from now; false when the lease is no longer
    /// `owner`'s under `fence` (taken by another, or expired).
    pub async fn renew_lease(&self, name: &str, owner: &str, fence: i64, ttl: Duration) -> Result<bool>;
    /// Shared mode's renewal, one step: `owner`'s process lease (false, nothing renewed,
    /// once it is no longer `owner`'s under `fence` or has expired), then every other live
    /// lease `owner` holds and the leases of the runs, outbox rows and timers it holds.
    pub async fn renew_process(&self, owner: &str, fence: i64, ttl: Duration) -> Result<bool>;
    /// Give `name` up (a graceful stop): it expires at once, so the next acquirer need not
    /// wait. Nothing happens when `owner` does not hold it.
    pub async fn release_lease(&self, name: &str, owner: &str) -> Result<()>;
    /// Shared mode's graceful stop: every lease `owner` holds, its process lease included,
    /// and the leases of its runs, outbox rows and timers expire at once, so the other
    /// processes take over what is left without waiting.
    pub async fn release_process(&self, owner: &str) -> Result<()>;
    /// Delete `name` when `owner` holds it: a lease on a piece of work that is done (an
    /// announce), whose name nobody takes again, so no fence needs to keep rising.
    pub async fn drop_lease(&self, name: &str, owner: &str) -> Result<()>;
    /// Put the database in shared mode or take it out (PostgreSQL: create or drop the
    /// triggers that lease runs and outbox rows, migration 0006; idempotent). Nothing on
    /// SQLite.
    pub async fn set_shared_mode(&self, shared: bool) -> Result<()>;
    /// Delete the process leases (`process:…`) that expired more than `after` ago: their
    /// processes are gone, and a name made of a fresh owner id is never taken again (so no
    /// fence needs to keep rising). Returns how many.
    pub async fn forget_dead_processes(&self, after: Duration) -> Result<u64>;
    /// Every lease, held or expired, by name.
    pub async fn leases(&self) -> Result<Vec<Lease>>;
    /// [`Store::save_inbound_offset`] under `lease`'s fence: written only while `lease`'s
    /// owner still holds it under its fence (false, nothing written, once another process
    /// took it), so a process that lost its lease without noticing cannot move the offset.
    pub async fn save_inbound_offset_fenced(&self, channel: &str, key: &str, next_offset: i64, lease: &Lease) -> Result<bool>;
}

/// A lease's time to live in the whole milliseconds the store writes (at least one).
pub(super) fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1)
}
