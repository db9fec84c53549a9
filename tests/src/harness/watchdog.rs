//! A time limit for every test that starts a gateway: a hung test (a wait without a bound,
//! a deadlock) ends the test binary with an error naming the test, instead of running
//! out CI's whole time. The limit is `SWITCHBOARD_TEST_TIMEOUT_SECS` (default 600 s, far
//! above any test's normal run); a test holds a [`Watch`] while it runs (every
//! [`Gateway`](super::Gateway) holds one), and one thread checks them every second.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The limit when `SWITCHBOARD_TEST_TIMEOUT_SECS` is not set.
const DEFAULT_LIMIT: Duration = Duration::from_secs(600);
/// Exit status of a test binary ended by the watchdog (libtest's own failure status).
const EXIT_TIMED_OUT: i32 = 101;

#[derive(Default)]
struct Watched {
    next: u64,
    /// id → (test name, when it started).
    running: BTreeMap<u64, (String, Instant)>,
}

fn watched() -> &'static Mutex<Watched> {
    static WATCHED: OnceLock<Mutex<Watched>> = OnceLock::new();
    WATCHED.get_or_init(|| {
        let limit = limit_from(std::env::var("SWITCHBOARD_TEST_TIMEOUT_SECS").ok().as_deref());
        // The thread lives as long as the test binary; it owns nothing to clean up.
        let _ = std::thread::Builder::new()
            .name("test-watchdog".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_secs(1));
                let over = watched()
                    .lock()
                    .ok()
                    .and_then(|w| overdue(&w.running, Instant::now(), limit));
                if let Some((name, ran)) = over {
                    eprintln!(
                        "\n!!! TIMED OUT: test `{name}` has run {}s, past the limit of {}s (SWITCHBOARD_TEST_TIMEOUT_SECS); ending the test binary !!!\n",
                        ran.as_secs(),
                        limit.as_secs()
                    );
                    std::process::exit(EXIT_TIMED_OUT);
                }
            });
        Mutex::new(Watched::default())
    })
}

fn limit_from(v: Option<&str>) -> Duration {
    v.and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .map_or(DEFAULT_LIMIT, Duration::from_secs)
}

/// The first test past `limit`, and how long it has run.
fn overdue(
    running: &BTreeMap<u64, (String, Instant)>,
    now: Instant,
    limit: Duration,
) -> Option<(String, Duration)> {
    running
        .values()
        .map(|(name, start)| (name, now.saturating_duration_since(*start)))
        .find(|(_, ran)| *ran > limit)
        .map(|(name, ran)| (name.clone(), ran))
}

/// A running test under the watchdog; dropped when the test ends.
pub struct Watch {
    id: u64,
}

impl Watch {
    /// Watches the current test (libtest names each test's thread after the test).
    pub fn start() -> Watch {
        let name = std::thread::current().name().unwrap_or("a test").to_owned();
        let mut w = watched().lock().unwrap_or_else(|e| e.into_inner());
        let id = w.next;
        w.next += 1;
        w.running.insert(id, (name, Instant::now()));
        Watch { id }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut w = watched().lock().unwrap_or_else(|e| e.into_inner());
        w.running.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a hung test never reported, or one reported before its limit.
    #[test]
    fn a_test_past_its_limit_is_named() {
        let t0 = Instant::now();
        let mut running = BTreeMap::new();
        running.insert(1, ("a::quick".to_string(), t0 + Duration::from_secs(50)));
        running.insert(2, ("a::hung".to_string(), t0));
        let limit = Duration::from_secs(60);
        assert_eq!(overdue(&running, t0 + Duration::from_secs(60), limit), None);
        let (name, ran) =
            overdue(&running, t0 + Duration::from_secs(61), limit).unwrap_or_default();
        assert_eq!((name.as_str(), ran.as_secs()), ("a::hung", 61));
        assert_eq!(limit_from(None), DEFAULT_LIMIT);
        assert_eq!(limit_from(Some("90")), Duration::from_secs(90));
        assert_eq!(limit_from(Some("0")), DEFAULT_LIMIT);
        assert_eq!(limit_from(Some("x")), DEFAULT_LIMIT);
        let w = Watch::start();
        assert!(watched()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .running
            .contains_key(&w.id));
        let id = w.id;
        drop(w);
        assert!(!watched()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .running
            .contains_key(&id));
    }
}
