//! The rhythm every lease keeper follows, whatever the lease (`gateway`, a process's own,
//! a channel's or cron's): a process that waits for a lease tries every third of
//! `storage.leaseTimeout`, at most a second apart; the holder renews every third of the
//! timeout and gives the lease up as lost when a renewal says it is gone, or none has
//! succeeded for two thirds of the timeout (the database is unreachable), a third of the
//! timeout before another process may take it.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::store::StoreError;

/// Longest wait between two attempts to take a lease another process holds (one small
/// statement each): a released lease is taken within about a second, whatever the timeout.
const POLL_MAX: Duration = Duration::from_secs(1);

/// How often a held lease is renewed.
pub fn renew_every(timeout: Duration) -> Duration {
    timeout / 3
}

/// How often a process that does not hold a lease tries to take it.
pub fn poll(timeout: Duration) -> Duration {
    renew_every(timeout).min(POLL_MAX)
}

/// How long without a successful renewal the holder keeps acting.
pub fn give_up_after(timeout: Duration) -> Duration {
    timeout * 2 / 3
}

/// What one renewal found.
pub enum Renewal {
    /// Still this process's.
    Held,
    /// Gone (why, for the log): another process has it, or it expired.
    Gone(String),
}

/// Why [`keep`] returned.
pub enum Kept {
    /// `cancel` fired.
    Cancelled,
    /// The lease is lost (why, for the log).
    Lost(String),
}

/// Renews `name` with `renew` every third of `timeout` until `cancel` fires or the lease is
/// lost: a renewal found it gone, or none succeeded for two thirds of the timeout since
/// `last_ok` (when the last successful attempt was sent). A failed renewal before that is
/// logged and tried again at the next beat.
pub async fn keep<R, F>(
    name: &str,
    mut last_ok: Instant,
    timeout: Duration,
    cancel: &CancellationToken,
    mut renew: R,
) -> Kept
where
    R: FnMut() -> F,
    F: Future<Output = Result<Renewal, StoreError>>,
{
    loop {
        tokio::select! {
            _ = tokio::time::sleep(renew_every(timeout)) => {}
            _ = cancel.cancelled() => return Kept::Cancelled,
        }
        let deadline = last_ok + give_up_after(timeout);
        let sent = Instant::now();
        let renewed = tokio::select! {
            r = tokio::time::timeout_at(deadline, renew()) => r,
            _ = cancel.cancelled() => return Kept::Cancelled,
        };
        let gave_up = |why: String| {
            Kept::Lost(format!(
                "the lease {name} could not be renewed for {:?} ({why})",
                give_up_after(timeout)
            ))
        };
        match renewed {
            Ok(Ok(Renewal::Held)) => last_ok = sent,
            Ok(Ok(Renewal::Gone(why))) => return Kept::Lost(why),
            Ok(Err(e)) if Instant::now() < deadline => {
                tracing::warn!(lease = %name, error = %e, "cannot renew the lease; trying again");
            }
            Ok(Err(e)) => return gave_up(e.to_string()),
            Err(_) => return gave_up("the database did not answer".into()),
        }
    }
}
