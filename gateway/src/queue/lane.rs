//! One lane: a FIFO with a concurrency cap and per-session serialization.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio_util::task::TaskTracker;

/// A unit of work: a run of one session.
pub struct Job {
    pub run_id: String,
    pub session_key: String,
    pub work: Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>,
}

/// A snapshot of a lane's counters.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneStats {
    pub name: &'static str,
    pub cap: usize,
    pub active: usize,
    pub depth: usize,
    pub started_total: u64,
    pub completed_total: u64,
    pub wait_seconds_total: f64,
    pub max_wait: Duration,
}

struct Queued {
    job: Job,
    enqueued_at: Instant,
}

struct State {
    cap: usize,
    active: usize,
    closed: bool,
    queue: VecDeque<Queued>,
    busy_sessions: HashSet<String>,
    started_total: u64,
    completed_total: u64,
    wait_total: Duration,
    max_wait: Duration,
}

impl State {
    /// Count a job of `session_key` as running (its slot is freed by a `SlotGuard`).
    fn take_slot(&mut self, session_key: &str) {
        self.active += 1;
        self.started_total += 1;
        self.busy_sessions.insert(session_key.to_string());
    }
}

pub struct Lane {
    name: &'static str,
    state: Mutex<State>,
    tracker: TaskTracker,
    idle: Notify,
}

impl Lane {
    pub fn new(name: &'static str, cap: usize) -> Arc<Lane> {
        Arc::new(Lane {
            name,
            state: Mutex::new(State {
                cap: cap.max(1),
                active: 0,
                closed: false,
                queue: VecDeque::new(),
                busy_sessions: HashSet::new(),
                started_total: 0,
                completed_total: 0,
                wait_total: Duration::ZERO,
                max_wait: Duration::ZERO,
            }),
            tracker: TaskTracker::new(),
            idle: Notify::new(),
        })
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Queue a job. Never blocks; the job starts when a slot is free and no other job of
    /// its session runs in this lane.
    pub fn enqueue(self: &Arc<Self>, job: Job) {
        self.lock().queue.push_back(Queued {
            job,
            enqueued_at: Instant::now(),
        });
        self.pump();
    }

    /// Take a slot for a job of `session_key` now, if the lane would start one at once:
    /// open, under its cap, and no job of the session running or queued. (Every queued job
    /// then waits for its own session, so taking the slot jumps no one.) The job given to
    /// [`Slot::run`] holds it; dropping the slot unused frees it.
    pub fn try_start(self: &Arc<Self>, session_key: &str) -> Option<Slot> {
        {
            let mut st = self.lock();
            if st.closed
                || st.active >= st.cap
                || st.busy_sessions.contains(session_key)
                || st.queue.iter().any(|q| q.job.session_key == session_key)
            {
                return None;
            }
            st.take_slot(session_key);
        }
        Some(self.slot(session_key.to_string()))
    }

    /// Change the cap. A smaller cap lets running jobs finish; a larger one starts more.
    pub fn resize(self: &Arc<Self>, cap: usize) {
        self.lock().cap = cap.max(1);
        self.pump();
    }

    /// Remove queued (not yet started) jobs of `session_key`; returns their run ids.
    pub fn remove_queued(&self, session_key: &str) -> Vec<String> {
        let mut st = self.lock();
        let mut removed = Vec::new();
        st.queue.retain(|q| {
            if q.job.session_key == session_key {
                removed.push(q.job.run_id.clone());
                false
            } else {
                true
            }
        });
        removed
    }

    /// Whether a job of `session_key` is queued (not started) in this lane.
    pub fn has_queued(&self, session_key: &str) -> bool {
        self.lock()
            .queue
            .iter()
            .any(|q| q.job.session_key == session_key)
    }

    pub fn stats(&self) -> LaneStats {
        let st = self.lock();
        LaneStats {
            name: self.name,
            cap: st.cap,
            active: st.active,
            depth: st.queue.len(),
            started_total: st.started_total,
            completed_total: st.completed_total,
            wait_seconds_total: st.wait_total.as_secs_f64(),
            max_wait: st.max_wait,
        }
    }

    /// Stop starting queued jobs.
    pub fn close(&self) {
        self.lock().closed = true;
        self.tracker.close();
    }

    /// Wait until no job of this lane runs.
    pub async fn wait_idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.lock().active == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Start as many runnable jobs as the cap allows.
    fn pump(self: &Arc<Self>) {
        let mut to_start = Vec::new();
        {
            let mut st = self.lock();
            while !st.closed && st.active < st.cap {
                let Some(pos) = st
                    .queue
                    .iter()
                    .position(|q| !st.busy_sessions.contains(&q.job.session_key))
                else {
                    break;
                };
                let Some(q) = st.queue.remove(pos) else { break };
                let waited = q.enqueued_at.elapsed();
                st.take_slot(&q.job.session_key);
                st.wait_total += waited;
                st.max_wait = st.max_wait.max(waited);
                to_start.push(q.job);
            }
        }
        for job in to_start {
            self.slot(job.session_key).run((job.work)());
        }
    }

    /// The guard of a slot already counted in the state (see `State::take_slot`).
    fn slot(self: &Arc<Self>, session_key: String) -> Slot {
        Slot {
            guard: SlotGuard {
                lane: self.clone(),
                session_key,
            },
        }
    }

    fn finish(self: &Arc<Self>, session_key: &str) {
        {
            let mut st = self.lock();
            st.active = st.active.saturating_sub(1);
            st.completed_total += 1;
            st.busy_sessions.remove(session_key);
            if st.active == 0 {
                self.idle.notify_waiters();
            }
        }
        self.pump();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }
}

/// A lane slot taken for one session's job (by the queue, or by [`Lane::try_start`]).
pub struct Slot {
    guard: SlotGuard,
}

impl Slot {
    /// Run `work` in the slot, owned by the lane's tracker like any job; the slot is freed
    /// when it ends.
    pub fn run(self, work: impl std::future::Future<Output = ()> + Send + 'static) {
        let tracker = self.guard.lane.tracker.clone();
        let guard = self.guard;
        tracker.spawn(async move {
            // The guard frees the slot even if the job panics.
            let _guard = guard;
            work.await;
        });
    }
}

struct SlotGuard {
    lane: Arc<Lane>,
    session_key: String,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.lane.finish(&self.session_key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::mpsc;

    fn job(
        session: &str,
        id: usize,
        log: mpsc::UnboundedSender<(usize, &'static str)>,
        gate: Arc<Notify>,
    ) -> Job {
        Job {
            run_id: id.to_string(),
            session_key: session.to_string(),
            work: Box::new(move || {
                Box::pin(async move {
                    let _ = log.send((id, "start"));
                    gate.notified().await;
                    let _ = log.send((id, "end"));
                })
            }),
        }
    }

    /// The tests run on tokio's paused clock: time moves only once every task is idle, so
    /// a bound costs nothing when things work and fails at once when they cannot.
    const BOUND: Duration = Duration::from_secs(5);

    /// `f`, or a failure if it is not done within [`BOUND`] (of paused time).
    async fn within<F: std::future::Future>(f: F) -> F::Output {
        tokio::time::timeout(BOUND, f)
            .await
            .expect("waited past the bound")
    }

    /// Lets every task that can make progress run until all are idle.
    async fn settle() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }

    /// Everything logged so far.
    fn drain(
        rx: &mut mpsc::UnboundedReceiver<(usize, &'static str)>,
    ) -> Vec<(usize, &'static str)> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    /// A session's second job waits for its first even with a slot free, while other
    /// sessions' jobs behind it start; at most `cap` run. (Catches: the busy-session check
    /// dropped, so one session's turns ran in parallel; or the cap not applied.)
    #[tokio::test(start_paused = true)]
    async fn cap_limits_concurrency_and_sessions_serialize() {
        let lane = Lane::new("main", 3);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let gates: Vec<Arc<Notify>> = (0..6).map(|_| Arc::new(Notify::new())).collect();
        lane.enqueue(job("a", 1, tx.clone(), gates[1].clone()));
        lane.enqueue(job("a", 2, tx.clone(), gates[2].clone()));
        lane.enqueue(job("b", 3, tx.clone(), gates[3].clone()));
        lane.enqueue(job("c", 4, tx.clone(), gates[4].clone()));
        lane.enqueue(job("d", 5, tx.clone(), gates[5].clone()));
        settle().await;
        assert_eq!(drain(&mut rx), [(1, "start"), (3, "start"), (4, "start")]);
        let s = lane.stats();
        assert_eq!((s.active, s.depth), (3, 2));
        // Job 1 ends: its session's next job takes the slot, ahead of job 5.
        gates[1].notify_one();
        assert_eq!(within(rx.recv()).await, Some((1, "end")));
        assert_eq!(within(rx.recv()).await, Some((2, "start")));
        settle().await;
        assert_eq!(drain(&mut rx), []);
        for gate in &gates {
            gate.notify_one();
        }
        within(lane.wait_idle()).await;
        assert_eq!(lane.stats().completed_total, 5);
        lane.close();
    }

    /// Growing the cap starts queued jobs at once. (Catches: `resize` only storing the cap.)
    #[tokio::test(start_paused = true)]
    async fn resize_starts_more_jobs() {
        let lane = Lane::new("subagent", 1);
        let running = Arc::new(AtomicUsize::new(0));
        let gate = tokio_util::sync::CancellationToken::new();
        for i in 0..4 {
            let running = running.clone();
            let gate = gate.clone();
            lane.enqueue(Job {
                run_id: i.to_string(),
                session_key: format!("s{i}"),
                work: Box::new(move || {
                    Box::pin(async move {
                        running.fetch_add(1, Ordering::SeqCst);
                        gate.cancelled().await;
                    })
                }),
            });
        }
        settle().await;
        assert_eq!(lane.stats().active, 1);
        lane.resize(3);
        settle().await;
        assert_eq!(running.load(Ordering::SeqCst), 3);
        assert_eq!(lane.stats().depth, 1);
        lane.resize(4);
        gate.cancel();
        within(lane.wait_idle()).await;
        assert_eq!(lane.stats().completed_total, 4);
    }

    #[tokio::test(start_paused = true)]
    async fn try_start_takes_a_free_slot_and_never_jumps_the_queue() {
        let lane = Lane::new("main", 2);
        let (tx, mut rx) = mpsc::unbounded_channel();
        let gate = Arc::new(Notify::new());
        let a = lane.try_start("a").expect("a free slot");
        // The session is busy while the slot is held: its jobs queue behind it.
        assert!(lane.try_start("a").is_none());
        lane.enqueue(job("a", 1, tx.clone(), gate.clone()));
        assert_eq!(lane.stats().depth, 1);
        let b = lane.try_start("b").expect("the second slot");
        assert!(lane.try_start("c").is_none(), "over the cap");
        assert_eq!(lane.stats().active, 2);
        // Dropping a slot unused frees it, and the queued job of its session starts.
        drop(a);
        assert_eq!(within(rx.recv()).await, Some((1, "start")));
        // Running work in a slot holds it until the work ends.
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        b.run(async move {
            let _ = done_rx.await;
        });
        settle().await;
        assert_eq!(lane.stats().active, 2);
        assert!(lane.try_start("b").is_none());
        let _ = done_tx.send(());
        gate.notify_one();
        within(lane.wait_idle()).await;
        let s = lane.stats();
        assert_eq!((s.started_total, s.completed_total), (3, 3));
        assert!(lane.try_start("b").is_some());
        lane.close();
        assert!(
            lane.try_start("d").is_none(),
            "a closed lane starts nothing"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_job_frees_its_slot() {
        let lane = Lane::new("main", 1);
        lane.enqueue(Job {
            run_id: "p".into(),
            session_key: "s".into(),
            work: Box::new(|| Box::pin(async { panic!("boom") })),
        });
        let done = Arc::new(Notify::new());
        let d = done.clone();
        lane.enqueue(Job {
            run_id: "q".into(),
            session_key: "s".into(),
            work: Box::new(move || Box::pin(async move { d.notify_one() })),
        });
        within(done.notified()).await;
    }
}
