//! Named leases on SQLite: a holder table in the engine's memory, on this process's clock.
//!
//! One process per database file is SQLite's deployment model, so the leases of that one
//! process are all there is to hold; nothing is written to the database (no statement on
//! any path, no table). They give the same answers as PostgreSQL's within this process —
//! one holder per name, the fence rising at each change of holder, expiry and release —
//! and say nothing about another process opening the same file.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::super::leases::{ttl_ms, Lease};
use super::super::{now_ms, Result};
use super::Sqlite;

/// The leases this engine holds, by name. Cheap to clone (shared).
#[derive(Clone, Default)]
pub(super) struct Holders(Arc<Mutex<BTreeMap<String, Lease>>>);

impl Holders {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Lease>> {
        // Every update below is a single assignment: a panic elsewhere cannot leave a
        // half-written lease behind, so a poisoned lock is still consistent.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Sqlite {
    /// Whether `name` is held and unexpired.
    pub(super) fn lease_live(&self, name: &str) -> bool {
        let now = now_ms();
        self.leases
            .lock()
            .get(name)
            .is_some_and(|l| l.expires_at >= now)
    }

    pub async fn acquire_lease(
        &self,
        name: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>> {
        let now = now_ms();
        let expires_at = now.saturating_add(ttl_ms(ttl));
        let mut held = self.leases.lock();
        let lease = match held.get(name) {
            Some(l) if l.owner == owner => Lease {
                renewed_at: now,
                expires_at,
                ..l.clone()
            },
            Some(l) if l.expires_at >= now => return Ok(None),
            other => Lease {
                name: name.to_owned(),
                owner: owner.to_owned(),
                fence: other.map_or(1, |l| l.fence + 1),
                acquired_at: now,
                renewed_at: now,
                expires_at,
            },
        };
        held.insert(name.to_owned(), lease.clone());
        Ok(Some(lease))
    }

    pub async fn renew_lease(
        &self,
        name: &str,
        owner: &str,
        fence: i64,
        ttl: Duration,
    ) -> Result<bool> {
        let now = now_ms();
        let mut held = self.leases.lock();
        match held.get_mut(name) {
            Some(l) if l.owner == owner && l.fence == fence && l.expires_at >= now => {
                l.renewed_at = now;
                l.expires_at = now.saturating_add(ttl_ms(ttl));
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    pub async fn renew_process(&self, owner: &str, fence: i64, ttl: Duration) -> Result<bool> {
        // One process per file: no rows are leased on SQLite; the named leases are renewed
        // as one.
        let name = super::super::leases::process_lease(owner);
        if !self.renew_lease(&name, owner, fence, ttl).await? {
            return Ok(false);
        }
        let now = now_ms();
        let expires_at = now.saturating_add(ttl_ms(ttl));
        for lease in self.leases.lock().values_mut() {
            if lease.owner == owner && lease.expires_at >= now {
                lease.renewed_at = now;
                lease.expires_at = expires_at;
            }
        }
        Ok(true)
    }

    pub async fn release_process(&self, owner: &str) -> Result<()> {
        let past = now_ms() - 1;
        for lease in self.leases.lock().values_mut() {
            if lease.owner == owner {
                lease.expires_at = lease.expires_at.min(past);
            }
        }
        Ok(())
    }

    pub async fn release_lease(&self, name: &str, owner: &str) -> Result<()> {
        if let Some(l) = self.leases.lock().get_mut(name) {
            if l.owner == owner {
                l.expires_at = now_ms() - 1;
            }
        }
        Ok(())
    }

    pub async fn drop_lease(&self, name: &str, owner: &str) -> Result<()> {
        let mut held = self.leases.lock();
        if held.get(name).is_some_and(|l| l.owner == owner) {
            held.remove(name);
        }
        Ok(())
    }

    pub async fn forget_dead_processes(&self, after: Duration) -> Result<u64> {
        let before = now_ms().saturating_sub(ttl_ms(after));
        let mut held = self.leases.lock();
        let n = held.len();
        held.retain(|name, l| !(name.starts_with("process:") && l.expires_at < before));
        Ok((n - held.len()) as u64)
    }

    pub async fn set_shared_mode(&self, _shared: bool) -> Result<()> {
        Ok(()) // one process per database file
    }

    pub async fn save_inbound_offset_fenced(
        &self,
        channel: &str,
        key: &str,
        next_offset: i64,
        lease: &Lease,
    ) -> Result<bool> {
        let held = self
            .leases
            .lock()
            .get(&lease.name)
            .is_some_and(|l| l.owner == lease.owner && l.fence == lease.fence);
        if held {
            self.save_inbound_offset(channel, key, next_offset).await?;
        }
        Ok(held)
    }

    pub async fn leases(&self) -> Result<Vec<Lease>> {
        Ok(self.leases.lock().values().cloned().collect())
    }
}
