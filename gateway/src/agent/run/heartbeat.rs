//! The stale-run heartbeat of sub-agent runs (`agents.defaults.subagents.staleAfter`): a
//! run that shows no progress for that long — no streamed model output, no tool call
//! started, running or ended — is cancelled and ends `timeout` ("stale: no progress for …").
//!
//! Progress is reported through a task-local [`Heartbeat`] set around the run's loop, so
//! the provider's stream reader can report each chunk ([`touch`]) without knowing about
//! runs. A tool call in flight counts as progress for as long as it runs (tools are bounded
//! by their own limits, e.g. `exec`'s timeout); a model call counts only by what it streams,
//! so a hung model is stale and a slow but streaming one is not.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

/// The range `staleAfter` is clamped to.
pub const MIN_STALE_AFTER: Duration = Duration::from_secs(30);
pub const MAX_STALE_AFTER: Duration = Duration::from_secs(60 * 60);

/// In debug builds only: the end-to-end tests lower the clamp's lower bound to this many
/// milliseconds through the daemon's environment (they must not wait 30 s for a run to go
/// stale). Release builds ignore it.
pub const TEST_MIN_ENV: &str = "SWITCHBOARD_TEST_STALE_MIN_MS";

tokio::task_local! {
    static CURRENT: Heartbeat;
}

/// A run's last sign of progress. Clones share it.
#[derive(Clone)]
pub struct Heartbeat(Arc<Inner>);

struct Inner {
    base: Instant,
    /// Milliseconds after `base` of the last progress.
    last_ms: AtomicU64,
    /// Tool calls in flight.
    busy: AtomicUsize,
}

impl Default for Heartbeat {
    fn default() -> Self {
        Self::new()
    }
}

impl Heartbeat {
    pub fn new() -> Heartbeat {
        Heartbeat(Arc::new(Inner {
            base: Instant::now(),
            last_ms: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
        }))
    }

    /// Record progress now.
    pub fn beat(&self) {
        let ms = u64::try_from(self.0.base.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.0.last_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// Mark a tool call in flight until the guard is dropped (progress at both ends).
    pub fn busy(&self) -> Busy {
        self.beat();
        self.0.busy.fetch_add(1, Ordering::Relaxed);
        Busy(self.clone())
    }

    /// Resolves once the run has shown no progress for `after`: then gives `after`.
    pub async fn stale(&self, after: Duration) -> Duration {
        loop {
            if self.0.busy.load(Ordering::Relaxed) > 0 {
                self.beat();
            }
            let last = self.0.base + Duration::from_millis(self.0.last_ms.load(Ordering::Relaxed));
            let due = last + after;
            if Instant::now() >= due {
                return after;
            }
            tokio::time::sleep_until(due).await;
        }
    }

    /// Run `fut` with this heartbeat as the task's current one (see [`touch`]).
    pub async fn scope<F: std::future::Future>(&self, fut: F) -> F::Output {
        CURRENT.scope(self.clone(), fut).await
    }
}

/// A tool call in flight (see [`Heartbeat::busy`]).
pub struct Busy(Heartbeat);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.beat();
        self.0 .0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Record progress on the current task's heartbeat, if it has one (a model stream's chunk).
pub fn touch() {
    let _ = CURRENT.try_with(Heartbeat::beat);
}

/// A tool call in flight on the current task's heartbeat, if it has one.
pub fn busy() -> Option<Busy> {
    CURRENT.try_with(Heartbeat::busy).ok()
}

/// `staleAfter` as configured, clamped to its range. The lower bound is
/// [`MIN_STALE_AFTER`] except under the tests' [`TEST_MIN_ENV`] in debug builds.
pub fn stale_after(configured: Duration) -> Duration {
    configured.clamp(min_stale_after(), MAX_STALE_AFTER)
}

fn min_stale_after() -> Duration {
    #[cfg(debug_assertions)]
    {
        static MIN: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
        if let Some(d) = *MIN.get_or_init(|| {
            std::env::var(TEST_MIN_ENV)
                .ok()
                .and_then(|v| v.parse().ok())
                .map(Duration::from_millis)
        }) {
            return d;
        }
    }
    MIN_STALE_AFTER
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a paused clock: no progress for `after` is stale; a beat pushes the moment back;
    /// a tool call in flight keeps the run alive however long it takes. (Catches: a
    /// detector that fires on elapsed time instead of silence, or one fooled by a long
    /// tool call.)
    #[tokio::test(start_paused = true)]
    async fn silence_is_stale_and_progress_is_not() {
        let after = Duration::from_secs(60);
        let hb = Heartbeat::new();
        let start = Instant::now();
        assert_eq!(hb.stale(after).await, after);
        assert_eq!(start.elapsed(), after);

        let hb = Heartbeat::new();
        let beater = hb.clone();
        let start = Instant::now();
        let beats = async move {
            for _ in 0..5 {
                tokio::time::sleep(Duration::from_secs(50)).await;
                beater.beat();
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            d = hb.stale(after) => assert_eq!(d, after),
            _ = beats => unreachable!(),
        }
        assert_eq!(start.elapsed(), Duration::from_secs(250) + after);

        let hb = Heartbeat::new();
        let busy = hb.busy();
        let long = tokio::time::sleep(Duration::from_secs(600));
        tokio::select! {
            _ = hb.stale(after) => panic!("a tool call in flight is progress"),
            _ = long => {}
        }
        drop(busy);
        let start = Instant::now();
        hb.stale(after).await;
        assert_eq!(start.elapsed(), after);
    }

    #[tokio::test]
    async fn touch_reaches_the_scoped_heartbeat_only() {
        touch();
        let hb = Heartbeat::new();
        let before = hb.0.last_ms.load(Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(5)).await;
        hb.scope(async { touch() }).await;
        assert!(hb.0.last_ms.load(Ordering::Relaxed) > before);
    }

    #[test]
    fn stale_after_is_clamped() {
        let five = Duration::from_secs(300);
        assert_eq!(stale_after(five), five);
        assert_eq!(stale_after(Duration::from_secs(7200)), MAX_STALE_AFTER);
        assert_eq!(stale_after(Duration::from_secs(1)), min_stale_after());
    }
}
