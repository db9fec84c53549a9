//! The one retry backoff policy of the daemon: doubling waits, capped, with jitter. Every
//! retry loop takes its waits from a [`Backoff`]: here Telegram's polling, sending and
//! `getMe`, Discord's REST sends and gateway check; in the gateway the outbox, announces,
//! model calls and the channel supervisor. A delay the platform gives (`Retry-After`, a
//! rate-limit reset) comes first and is used as given.
//!
//! Ours rather than a crate's: `backon` (the candidate) adds its jitter on top of the
//! delay, up to twice the cap, and drives the operation itself through a closure, while
//! these loops pick each wait from the error they got (the platform's delay first), run
//! until a `CancellationToken` fires, and keep state between tries (Telegram's plain-text
//! fallback). A policy that answers "how long before try n" fits them with no wrapper.

use std::time::Duration;

/// Connecting to a platform (Telegram's `getMe`, Discord's gateway URL), retried until it
/// works or the adapter stops: 1 s doubling to a minute.
pub const CONNECT: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));

/// Waits of `first`, doubling per try up to `max`, each drawn from its upper half.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    jitter: bool,
}

impl Backoff {
    /// Waits from `first` (before the first retry), doubling, at most `max`; jittered.
    pub const fn new(first: Duration, max: Duration) -> Backoff {
        Backoff {
            first,
            max,
            jitter: true,
        }
    }

    /// The same waits without jitter (for tests that count exact delays).
    pub const fn without_jitter(self) -> Backoff {
        Backoff {
            jitter: false,
            ..self
        }
    }

    /// The longest wait.
    pub const fn max(&self) -> Duration {
        self.max
    }

    /// The wait before try `n + 1` (`n` tries failed, from 1) without jitter:
    /// `first · 2^(n-1)`, at most `max`.
    pub fn ceiling(&self, n: u32) -> Duration {
        let doublings = n.saturating_sub(1).min(31);
        self.first.saturating_mul(1 << doublings).min(self.max)
    }

    /// The wait before try `n + 1`: uniformly within the upper half of
    /// [`Backoff::ceiling`] ("equal jitter"), so clients that failed together do not
    /// retry together, and no wait is longer than the ceiling (nor than `max`).
    pub fn delay(&self, n: u32) -> Duration {
        let ceiling = self.ceiling(n);
        if !self.jitter {
            return ceiling;
        }
        ceiling / 2 + (ceiling / 2).mul_f64(fastrand::f64())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn ceilings_double_up_to_the_cap() {
        let b = Backoff::new(Duration::from_millis(500), Duration::from_secs(60));
        let ceilings: Vec<Duration> = (1..=9).map(|n| b.ceiling(n)).collect();
        let ms = |v: &[u64]| {
            v.iter()
                .map(|m| Duration::from_millis(*m))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ceilings,
            ms(&[500, 1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000])
        );
        assert_eq!(b.ceiling(0), Duration::from_millis(500));
        assert_eq!(b.ceiling(u32::MAX), Duration::from_secs(60));
        assert_eq!(b.without_jitter().delay(3), Duration::from_secs(2));
    }

    /// Catches: retries without jitter (every client that failed together retrying in
    /// the same instant, the herd the retry then fails under again).
    #[test]
    fn clients_that_failed_together_do_not_retry_together() {
        let b = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));
        let delays: std::collections::HashSet<Duration> = (0..64).map(|_| b.delay(4)).collect();
        assert!(delays.len() > 32, "{delays:?}");
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: jitter that pushes a wait past its ceiling or the cap (the bounds the
        /// loops promise), or that collapses it to nothing.
        #[test]
        fn a_delay_stays_in_the_upper_half_of_its_ceiling(
            first_ms in 1u64..10_000,
            max_ms in 1u64..600_000,
            n in 0u32..100,
        ) {
            let b = Backoff::new(Duration::from_millis(first_ms), Duration::from_millis(max_ms));
            let d = b.delay(n);
            prop_assert!(d <= b.ceiling(n) && d <= b.max(), "{d:?}");
            prop_assert!(d >= b.ceiling(n) / 2, "{d:?}");
        }
    }
}
