//! Memory given back to the OS once the daemon goes quiet.
//!
//! Both allocators keep what a burst of work freed, for the next burst: mimalloc (the
//! daemon's, `main.rs`) keeps emptied pages in each thread's heap and purges its arenas
//! only when it is next called, and glibc's malloc (SQLite's) keeps freed chunks in its
//! arenas. A daemon that served 10,000 turns and then went quiet held ~60 MB of it
//! (docs/performance.md, "Memory after use"). So when the runtime's workers have been
//! idle for a few seconds, [`release_when_quiet`] gives it back once: glibc's arenas are
//! trimmed, and each worker collects its mimalloc heap the next time it parks (woken to
//! park again at once), which also purges every arena's free pages. Nothing runs while
//! the daemon is busy, and nothing again until it has been busy and gone quiet once more.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How often the workers' busy time is looked at.
const TICK: Duration = Duration::from_secs(1);
/// Ticks in a row with the workers (nearly) idle before memory is given back: 6 to 8 s
/// after the last work, so after what goes at a quiet spell's start has gone — the
/// store's caches (five quiet seconds, `store::sqlite`), the API's kept-alive connections
/// (`gateway.http.idleTimeout`, 5 s by default) and the idle connections to the model
/// (closed 3 to 6 s after their last use: `runtime::roots`) — with their buffers.
const QUIET_TICKS: u32 = 8;
/// Busy time of all workers together in one tick under which the daemon counts as quiet.
/// A WAL checkpoint a second and an idle socket's ping take far less; what goes at a quiet
/// spell's start (the store dropping its transcripts and prepared statements, a hundred
/// kept-alive connections closing), which must count as quiet, takes 10–30 ms in one tick
/// on a small VM. A turn takes a millisecond or more: a daemon below this serves fewer
/// than a few dozen a second, and gives memory back once, not again until it is busy.
const BUSY: Duration = Duration::from_millis(50);

/// Bumped at every release; a worker that parks collects its heap when it has not yet
/// seen the current value.
static EPOCH: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static SEEN: Cell<u64> = const { Cell::new(0) };
}

/// For the runtime's `on_thread_park`: collect this worker's mimalloc heap once after
/// each release (an atomic load and a thread-local read otherwise).
pub fn on_park() {
    let epoch = EPOCH.load(Ordering::Relaxed);
    if SEEN.get() != epoch {
        SEEN.set(epoch);
        collect_this_thread();
        tracing::debug!(thread = ?std::thread::current().id(), "heap collected");
    }
}

/// Watch the current runtime's workers and give memory back once per quiet spell, until
/// `cancel`.
pub async fn release_when_quiet(cancel: CancellationToken) {
    let metrics = tokio::runtime::Handle::current().metrics();
    let busy = || {
        (0..metrics.num_workers())
            .map(|w| metrics.worker_total_busy_duration(w))
            .sum::<Duration>()
    };
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut spell = QuietSpell::new(busy());
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        if spell.observe(busy()) {
            release();
            wake_workers(metrics.num_workers()).await;
            // The release's own work is not activity.
            spell.rebase(busy());
        }
    }
}

/// Get every worker to park once more, so each collects its heap now (`on_park`). A worker
/// parked since before the release (a quiet daemon needs one at most) would otherwise
/// keep what it freed — the connections that closed at the quiet spell's start — until
/// something woke it. Spawning more than one task from a worker notifies a parked one to
/// take work, which it then finds done or does, and parks again.
async fn wake_workers(workers: usize) {
    let mut nudges = tokio::task::JoinSet::new();
    for _ in 0..2 * workers {
        nudges.spawn(async { on_park() });
    }
    while nudges.join_next().await.is_some() {}
}

/// Give memory back now: glibc's arenas are trimmed and this thread's mimalloc heap is
/// collected here; the runtime's other workers collect theirs when they next park.
pub fn release() {
    SEEN.set(EPOCH.fetch_add(1, Ordering::Relaxed) + 1);
    collect_this_thread();
    trim_malloc();
    tracing::debug!("memory given back after a quiet spell");
}

/// Whether the daemon just became quiet: fed the workers' total busy time at each tick,
/// says yes once when it has moved less than `BUSY` for `QUIET_TICKS` ticks in a row,
/// then not again until a busy tick.
#[derive(Debug)]
struct QuietSpell {
    last: Duration,
    /// Quiet ticks since the last busy one.
    quiet: u32,
}

impl QuietSpell {
    /// Starts as after a busy tick: the start itself is work worth giving back.
    fn new(busy: Duration) -> QuietSpell {
        QuietSpell {
            last: busy,
            quiet: 0,
        }
    }

    fn observe(&mut self, busy: Duration) -> bool {
        let worked = busy.saturating_sub(self.last);
        self.last = busy;
        if worked >= BUSY {
            self.quiet = 0;
            return false;
        }
        self.quiet = self.quiet.saturating_add(1);
        self.quiet == QUIET_TICKS
    }

    fn rebase(&mut self, busy: Duration) {
        self.last = busy;
    }
}

/// Free this thread's emptied mimalloc pages and purge the arenas' free memory. Harmless
/// where mimalloc is not the global allocator (tests): its heap is then empty.
fn collect_this_thread() {
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any
    // time; it only releases memory no live allocation uses.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// Return glibc's free heap memory (SQLite's allocations) to the OS.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim_malloc() {
    #[allow(unsafe_code)]
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: `malloc_trim` takes no pointer and locks each arena itself; it may be called
    // from any thread at any time.
    #[allow(unsafe_code)]
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim_malloc() {}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Duration = Duration::from_millis(1);
    const WORK: Duration = Duration::from_millis(500);

    /// Feed `spell` the busy time advanced by each step; which ticks released.
    fn run(spell: &mut QuietSpell, steps: &[Duration]) -> Vec<bool> {
        let mut total = spell.last;
        steps
            .iter()
            .map(|d| {
                total += *d;
                spell.observe(total)
            })
            .collect()
    }

    /// `n` quiet ticks.
    fn quiet(n: u32) -> Vec<Duration> {
        vec![IDLE; n as usize]
    }

    #[test]
    fn a_quiet_spell_releases_once_after_its_ticks() {
        let mut spell = QuietSpell::new(Duration::ZERO);
        let steps = [vec![WORK], quiet(2 * QUIET_TICKS)].concat();
        let released = run(&mut spell, &steps);
        let at: Vec<usize> = (0..released.len()).filter(|i| released[*i]).collect();
        assert_eq!(at, [QUIET_TICKS as usize], "{spell:?}");
    }

    #[test]
    fn work_between_spells_arms_the_next_release() {
        let mut spell = QuietSpell::new(Duration::ZERO);
        let steps = [
            quiet(QUIET_TICKS),
            vec![WORK],
            quiet(QUIET_TICKS - 1),
            vec![WORK],
            quiet(QUIET_TICKS),
        ]
        .concat();
        let released = run(&mut spell, &steps);
        let at: Vec<usize> = (0..released.len()).filter(|i| released[*i]).collect();
        let ticks = QUIET_TICKS as usize;
        assert_eq!(at, [ticks - 1, 3 * ticks]);
    }

    #[test]
    fn a_daemon_that_never_rests_never_releases() {
        let mut spell = QuietSpell::new(Duration::ZERO);
        let steps = [BUSY; 50];
        assert!(run(&mut spell, &steps).iter().all(|r| !r));
    }

    #[test]
    fn a_release_is_safe_on_any_thread_and_under_the_system_allocator() {
        // The test binary's allocator is the system one; both calls must still be sound.
        let before = EPOCH.load(Ordering::Relaxed);
        release();
        std::thread::spawn(on_park).join().expect("on_park");
        assert!(EPOCH.load(Ordering::Relaxed) > before);
        let kept: Vec<u8> = vec![7; 1 << 20];
        release();
        assert!(kept.iter().all(|b| *b == 7));
    }
}
