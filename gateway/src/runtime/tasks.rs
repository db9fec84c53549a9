//! The runtime's background work: the tracker that owns short jobs, the shutdown token
//! every task and run listens to, and the notifies that wake the long-lived workers.

use std::future::Future;

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Who owns background jobs, when they stop, and what wakes the workers.
pub struct Tasks {
    /// Owner of short background jobs (delayed retries, slow commands).
    pub tracker: TaskTracker,
    /// Fired once on shutdown; every run's token is a child of it.
    pub shutdown: CancellationToken,
    /// Wakes the delivery worker when a row is added to the outbox.
    pub outbox_wake: Notify,
    /// Wakes the timer worker when a timer is added.
    pub timers_wake: Notify,
    /// Wakes the scheduler when a job changes.
    pub cron_wake: Notify,
}

impl Tasks {
    pub fn new(shutdown: CancellationToken) -> Tasks {
        Tasks {
            tracker: TaskTracker::new(),
            shutdown,
            outbox_wake: Notify::new(),
            timers_wake: Notify::new(),
            cron_wake: Notify::new(),
        }
    }

    /// Run `task` as one of the tracker's (it is waited for at shutdown).
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tracker.spawn(task)
    }
}
