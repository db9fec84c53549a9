//! One active process per PostgreSQL database: the `gateway` lease. At start a process
//! takes the lease before it does anything that acts (recovery, channels, the outbox, timers,
//! cron, the HTTP server); while another live process holds it, it stands by and tries
//! again every third of `storage.leaseTimeout`, at most a second apart. Once active, a keeper renews the lease
//! every third of the timeout; when a renewal says the lease is gone, or none has succeeded
//! for two thirds of it (the database is unreachable), the keeper fires `lost` and the
//! binary exits at once with [`EXIT_LEASE_LOST`] — another process may take over once the
//! lease expires, and everything this one did is durable (docs/postgres.md, "Standby").
//!
//! On SQLite, one process per database file is the deployment model, and `file_lock`
//! holds it: a second `switchboard run` on the same file stands by the same way and takes
//! over as soon as the first process is gone.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::store::{process_lease, Lease, Store, GATEWAY_LEASE};

use self::rhythm::{Kept, Renewal};

/// The exit code of a process that lost the `gateway` lease (sysexits' EX_TEMPFAIL: run it
/// again and it stands by, or takes over).
pub const EXIT_LEASE_LOST: u8 = 75;

/// This process's lease owner id: `host:pid:random`, made once at start (a restarted
/// process never takes its predecessor's lease for its own).
pub fn owner_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}:{}:{}", std::process::id(), &suffix[..8])
}

/// Waits until this process holds the `gateway` lease (`Some`, with the instant the
/// winning attempt was sent) or `shutdown` fires first (`None`: stop, nothing was started).
/// Logs once per holder that it stands by; a database error is logged and retried.
pub async fn acquire(
    store: &Store,
    owner: &str,
    timeout: Duration,
    shutdown: &CancellationToken,
) -> Option<(Lease, Instant)> {
    let mut standing_by_for: Option<String> = None;
    loop {
        if let Some(other) = other_mode(store, false).await {
            if standing_by_for.as_deref() != Some(other.as_str()) {
                tracing::error!("standing by: {other} acts on this database in shared mode (storage.processes); every process on one database must use the same mode");
                standing_by_for = Some(other);
            }
            tokio::select! {
                _ = tokio::time::sleep(rhythm::poll(timeout)) => continue,
                _ = shutdown.cancelled() => return None,
            }
        }
        let sent = Instant::now();
        match store.acquire_lease(GATEWAY_LEASE, owner, timeout).await {
            Ok(Some(lease)) => {
                tracing::info!(
                    owner,
                    fence = lease.fence,
                    "active: holding the gateway lease"
                );
                // Shared mode's triggers go (they would cost every turn); nobody of that
                // mode acts here now.
                if let Err(e) = store.set_shared_mode(false).await {
                    tracing::warn!(error = %e, "cannot take the database out of shared mode");
                }
                return Some((lease, sent));
            }
            Ok(None) => {
                let holder = holder(store).await;
                if standing_by_for.as_deref() != Some(holder.as_str()) {
                    tracing::info!("standing by: {holder} is active on this database");
                    standing_by_for = Some(holder);
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot take the gateway lease; trying again"),
        }
        tokio::select! {
            _ = tokio::time::sleep(rhythm::poll(timeout)) => {}
            _ = shutdown.cancelled() => return None,
        }
    }
}

/// Shared mode: take this process's own lease (nobody else can hold a fresh owner id, so
/// only a database error delays it; it is retried like a standby's attempt).
async fn join(
    store: &Store,
    owner: &str,
    timeout: Duration,
    shutdown: &CancellationToken,
) -> Option<(Lease, Instant)> {
    let name = process_lease(owner);
    let mut told = false;
    loop {
        if let Some(other) = other_mode(store, true).await {
            if !std::mem::replace(&mut told, true) {
                tracing::error!("standing by: {other} is active on this database in standby mode (storage.processes); every process on one database must use the same mode");
            }
            tokio::select! {
                _ = tokio::time::sleep(rhythm::poll(timeout)) => continue,
                _ = shutdown.cancelled() => return None,
            }
        }
        if let Err(e) = store.set_shared_mode(true).await {
            tracing::warn!(error = %e, "cannot put the database in shared mode; trying again");
            tokio::select! {
                _ = tokio::time::sleep(rhythm::poll(timeout)) => continue,
                _ = shutdown.cancelled() => return None,
            }
        }
        let sent = Instant::now();
        match store.acquire_lease(&name, owner, timeout).await {
            Ok(Some(lease)) => {
                tracing::info!(
                    owner,
                    "active: sharing the database's work with any other process"
                );
                return Some((lease, sent));
            }
            Ok(None) => {
                tracing::warn!(lease = %name, "the process lease is held by another process; trying again")
            }
            Err(e) => tracing::warn!(error = %e, "cannot take the process lease; trying again"),
        }
        tokio::select! {
            _ = tokio::time::sleep(rhythm::poll(timeout)) => {}
            _ = shutdown.cancelled() => return None,
        }
    }
}

/// A live process of the other mode on this database, if any (its owner id): for a
/// shared-mode process (`shared`), the holder of the `gateway` lease; for a standby-mode
/// one, a holder of a process lease. A guard against a config mistake — two processes
/// starting at the same instant in different modes can both pass it — not a lock.
async fn other_mode(store: &Store, shared: bool) -> Option<String> {
    let now = crate::store::now_ms();
    let leases = store.leases().await.ok()?;
    leases
        .into_iter()
        .filter(|l| l.expires_at > now)
        .find(|l| {
            if shared {
                l.name == GATEWAY_LEASE
            } else {
                l.name.starts_with("process:")
            }
        })
        .map(|l| l.owner)
}

/// Who holds the `gateway` lease, for the standby's log line.
async fn holder(store: &Store) -> String {
    match store.leases().await {
        Ok(leases) => leases
            .into_iter()
            .find(|l| l.name == GATEWAY_LEASE)
            .map_or_else(|| "another process".to_owned(), |l| l.owner),
        Err(_) => "another process".to_owned(),
    }
}

/// Renews `lease` every third of `timeout` until `cancel` fires (a graceful stop; the
/// caller then releases the lease). Fires `lost` and returns when the lease is gone or no
/// renewal has succeeded for two thirds of `timeout` since `held_since` (when the
/// acquisition was sent).
pub fn spawn_keeper(
    tasks: &TaskTracker,
    store: Store,
    lease: Lease,
    held_since: Instant,
    timeout: Duration,
    cancel: CancellationToken,
    lost: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tasks.spawn(async move {
        if let Err(why) = keep(&store, &lease, held_since, timeout, &cancel).await {
            tracing::error!(
                owner = %lease.owner,
                fence = lease.fence,
                "{why}: this process stops acting now (exit {EXIT_LEASE_LOST}); another process takes over"
            );
            lost.cancel();
        }
    })
}

/// The keeper's loop: `Ok` when cancelled, `Err(why)` when the lease is lost.
async fn keep(
    store: &Store,
    lease: &Lease,
    last_ok: Instant,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let gateway = lease.name == GATEWAY_LEASE;
    // A process lease (shared mode) is renewed with everything the process holds.
    let renew = || async {
        let held = if gateway {
            store
                .renew_lease(&lease.name, &lease.owner, lease.fence, timeout)
                .await?
        } else {
            store
                .renew_process(&lease.owner, lease.fence, timeout)
                .await?
        };
        Ok(match held {
            true => Renewal::Held,
            false if gateway => {
                Renewal::Gone("the gateway lease was taken by another process".into())
            }
            false => Renewal::Gone(format!("the lease {} expired", lease.name)),
        })
    };
    match rhythm::keep(&lease.name, last_ok, timeout, cancel, renew).await {
        Kept::Cancelled => Ok(()),
        Kept::Lost(why) => Err(why),
    }
}

pub mod file_lock;
pub mod rhythm;

/// How a process's start goes on its database.
pub enum Start {
    /// SQLite: no lease (the database file's lock, `file_lock`, is taken before the store
    /// is opened).
    Alone,
    /// PostgreSQL: this process holds the `gateway` lease (standby mode) or its own
    /// process lease (shared mode); its keeper renews it.
    Active(Active),
    /// Shut down while standing by: nothing was started.
    Stopped,
}

/// The held `gateway` lease, or in shared mode the process lease, and its keeper.
pub struct Active {
    store: Store,
    owner: String,
    lease: Lease,
    keeper: tokio::task::JoinHandle<()>,
    keeper_cancel: CancellationToken,
}

/// On PostgreSQL, waits for the `gateway` lease (standing by while another process holds
/// it) and starts its keeper in `tasks`, which fires `lost` when the lease is lost. In
/// shared mode (`shared`) nobody stands by: the process takes a lease of its own
/// (`process:<owner>`), which its keeper renews with everything it holds.
pub async fn start(
    store: &Store,
    owner: String,
    timeout: Duration,
    shared: bool,
    shutdown: &CancellationToken,
    tasks: &TaskTracker,
    lost: CancellationToken,
) -> Start {
    if !store.is_postgres() {
        return Start::Alone;
    }
    let taken = if shared {
        join(store, &owner, timeout, shutdown).await
    } else {
        acquire(store, &owner, timeout, shutdown).await
    };
    let Some((lease, since)) = taken else {
        return Start::Stopped;
    };
    let keeper_cancel = CancellationToken::new();
    let keeper = spawn_keeper(
        tasks,
        store.clone(),
        lease.clone(),
        since,
        timeout,
        keeper_cancel.clone(),
        lost,
    );
    Start::Active(Active {
        store: store.clone(),
        owner,
        lease,
        keeper,
        keeper_cancel,
    })
}

impl Active {
    /// This process's lease owner id.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The lease as taken (its fence stays this process's while it holds it).
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// Whether this process shares the work with others (shared mode).
    pub fn shared(&self) -> bool {
        self.lease.name != GATEWAY_LEASE
    }

    /// A graceful stop, once nothing acts any more: stop renewing and give the lease up, so
    /// a standby takes over now rather than at its expiry.
    pub async fn release(self) {
        let shared = self.shared();
        self.keeper_cancel.cancel();
        let _ = self.keeper.await;
        if shared {
            match self.store.release_process(&self.owner).await {
                Ok(()) => tracing::info!(owner = %self.owner, "released this process's leases"),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot release this process's leases; other processes take its work over when they expire")
                }
            }
            return;
        }
        match self.store.release_lease(GATEWAY_LEASE, &self.owner).await {
            Ok(()) => tracing::info!(owner = %self.owner, "released the gateway lease"),
            Err(e) => {
                tracing::warn!(error = %e, "cannot release the gateway lease; a standby takes over when it expires")
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
