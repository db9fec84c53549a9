//! Shared mode: a thing exactly one process runs at a time — a channel's inbound side
//! (`channel:telegram`: the poller or the webhook's registration; `channel:discord`: the
//! gateway session) or the cron scheduler (`cron`) — held under a named lease taken with
//! this process's owner id (docs/postgres.md, "Shared mode: channels and cron").
//!
//! [`hold`] tries to take the lease in the rhythm every lease keeper follows
//! (`standby::rhythm`); once it has it, it starts the work with the lease and a
//! child token, and takes the lease again every third of the timeout (which renews it
//! while it is this process's). When that finds the lease gone — another process has it,
//! or its fence changed since — or no attempt has succeeded for two thirds of the
//! timeout, it stops the work at once and goes back to waiting. When its token fires (a
//! graceful stop, a config change), it stops the work and releases the lease, so another
//! process takes over without waiting for the expiry. The process keeper renews the lease
//! too (`Store::renew_process`), so a live process never lets it expire between two looks.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::standby::rhythm::{self, Kept, Renewal};
use crate::store::{Lease, Store};

use super::Member;

/// The lease of the cron scheduler.
pub const CRON_LEASE: &str = "cron";

/// The lease of a channel's inbound side: `channel:<channel id>`.
pub fn channel_lease(channel: &str) -> String {
    format!("channel:{channel}")
}

/// How long the work gets to stop on its token before it is dropped (aborted).
const STOP_WAIT: Duration = Duration::from_secs(2);

/// Why the work stopped.
enum End {
    /// The token fired: release the lease and return.
    Cancelled,
    /// The lease is no longer this process's (the reason, for the log): wait for it again.
    Lost(String),
    /// The work returned on its own: release the lease and return.
    Finished,
}

/// Runs `work` while this process holds the lease `name`, until `cancel` fires (then the
/// lease is released). `work` gets the lease as taken (its fence is what fenced writes
/// use) and a token that fires when the lease is lost or `cancel` fires; it must return
/// soon after its token fires (it is dropped after [`STOP_WAIT`]).
pub async fn hold<W, F>(
    store: Store,
    name: String,
    member: Member,
    cancel: CancellationToken,
    mut work: W,
) where
    W: FnMut(Lease, CancellationToken) -> F,
    F: Future<Output = ()>,
{
    let timeout = member.lease_timeout;
    let owner: &str = &member.owner;
    let mut waiting_for: Option<String> = None;
    loop {
        let Some((lease, taken_at)) =
            wait_for(&store, &name, owner, timeout, &cancel, &mut waiting_for).await
        else {
            return;
        };
        waiting_for = None;
        tracing::info!(lease = %name, fence = lease.fence, "{name}: this process holds it now");
        let token = cancel.child_token();
        let run = work(lease.clone(), token.clone());
        tokio::pin!(run);
        let mut finished = false;
        let end = tokio::select! {
            end = keep(&store, &lease, taken_at, timeout, &cancel) => end,
            () = &mut run => {
                finished = true;
                End::Finished
            }
        };
        token.cancel();
        if !finished && tokio::time::timeout(STOP_WAIT, &mut run).await.is_err() {
            tracing::warn!(lease = %name, "{name}: the work did not stop in {STOP_WAIT:?}; dropped");
        }
        match end {
            End::Lost(why) => {
                tracing::error!(lease = %name, fence = lease.fence, "{name}: {why}; stopped here, another process holds it now");
            }
            End::Cancelled | End::Finished => {
                release(&store, &name, owner).await;
                return;
            }
        }
    }
}

/// Waits until `owner` holds `name` (the lease, and when the winning attempt was sent), or
/// `None` when `cancel` fires first. Logs once per holder that another process has it.
async fn wait_for(
    store: &Store,
    name: &str,
    owner: &str,
    timeout: Duration,
    cancel: &CancellationToken,
    waiting_for: &mut Option<String>,
) -> Option<(Lease, Instant)> {
    loop {
        if cancel.is_cancelled() {
            return None;
        }
        let sent = Instant::now();
        match store.acquire_lease(name, owner, timeout).await {
            Ok(Some(lease)) => return Some((lease, sent)),
            Ok(None) => {
                let holder = holder(store, name).await;
                if waiting_for.as_deref() != Some(holder.as_str()) {
                    tracing::info!(lease = %name, "{name}: held by {holder}; this process waits to take it over");
                    *waiting_for = Some(holder);
                }
            }
            Err(e) => {
                tracing::warn!(lease = %name, error = %e, "{name}: cannot take the lease; trying again")
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(rhythm::poll(timeout)) => {}
            _ = cancel.cancelled() => return None,
        }
    }
}

/// While the work runs: takes `lease` again every third of `timeout` (which renews it
/// while it is this process's); returns when it is lost (or cannot be confirmed for two
/// thirds of the timeout) or `cancel` fires.
async fn keep(
    store: &Store,
    lease: &Lease,
    last_ok: Instant,
    timeout: Duration,
    cancel: &CancellationToken,
) -> End {
    let again = || async {
        Ok(
            match store
                .acquire_lease(&lease.name, &lease.owner, timeout)
                .await?
            {
                Some(l) if l.fence == lease.fence => Renewal::Held,
                Some(l) => Renewal::Gone(format!(
                    "another process held it in between (fence {} → {})",
                    lease.fence, l.fence
                )),
                None => Renewal::Gone("the lease was taken by another process".into()),
            },
        )
    };
    match rhythm::keep(&lease.name, last_ok, timeout, cancel, again).await {
        Kept::Cancelled => End::Cancelled,
        Kept::Lost(why) => End::Lost(why),
    }
}

/// Gives the lease up, so another process takes it over now rather than at its expiry.
async fn release(store: &Store, name: &str, owner: &str) {
    match store.release_lease(name, owner).await {
        Ok(()) => tracing::info!(lease = %name, "{name}: released"),
        Err(e) => {
            tracing::warn!(lease = %name, error = %e, "{name}: cannot release the lease; another process takes it over when it expires")
        }
    }
}

/// Who holds `name`, for the log line.
async fn holder(store: &Store, name: &str) -> String {
    match store.leases().await {
        Ok(leases) => leases
            .into_iter()
            .find(|l| l.name == name)
            .map_or_else(|| "another process".to_owned(), |l| l.owner),
        Err(_) => "another process".to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "hold_tests.rs"]
mod tests;
