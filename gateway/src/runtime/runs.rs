//! The runs in progress in this process, by session key, with their cancel tokens.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

/// Why a run's cancel token fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelReason {
    /// `/stop`, `/subagents stop`, the API.
    User,
    /// A newer message arrived in `interrupt` mode.
    Superseded,
    /// The gateway is shutting down: the run is re-queued, to resume after restart.
    Shutdown,
}

/// A run in progress, by session key.
#[derive(Clone)]
pub struct ActiveRun {
    pub run_id: String,
    pub cancel: CancellationToken,
    pub reason: Arc<Mutex<Option<CancelReason>>>,
}

impl ActiveRun {
    pub fn cancel(&self, reason: CancelReason) {
        self.reason.lock().get_or_insert(reason);
        self.cancel.cancel();
    }

    pub fn reason(&self) -> Option<CancelReason> {
        *self.reason.lock()
    }
}

/// The runs in progress, by session key.
#[derive(Default)]
pub struct Runs {
    active: Mutex<HashMap<String, ActiveRun>>,
}

impl Runs {
    pub fn get(&self, session_key: &str) -> Option<ActiveRun> {
        self.active.lock().get(session_key).cloned()
    }

    pub fn all(&self) -> Vec<(String, ActiveRun)> {
        self.active
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub(crate) fn insert(&self, session_key: &str, run: ActiveRun) {
        self.active.lock().insert(session_key.to_string(), run);
    }

    pub(crate) fn remove(&self, session_key: &str, run_id: &str) {
        let mut map = self.active.lock();
        if map.get(session_key).is_some_and(|r| r.run_id == run_id) {
            map.remove(session_key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a cancel reason lost after a panic while its lock was held (a poisoned
    /// std mutex made `cancel` skip recording it and `reason` answer `None`, which ends a
    /// `/stop`ped run as a shutdown checkpoint: it would resume at the next start).
    #[test]
    fn a_panic_under_the_reason_lock_loses_no_cancel_reason() {
        let run = ActiveRun {
            run_id: "r1".into(),
            cancel: CancellationToken::new(),
            reason: Arc::default(),
        };
        let held = run.reason.clone();
        let _ = std::thread::spawn(move || {
            let _guard = held.lock();
            panic!("a bug while the lock is held");
        })
        .join();
        run.cancel(CancelReason::User);
        assert_eq!(run.reason(), Some(CancelReason::User));
        assert!(run.cancel.is_cancelled());
    }
}
