//! Waiting for the run that takes a message (`wait: true` on the API, `/subagents send`).
//!
//! A waiter subscribes to the `run.ended` events of one session key *before* it submits
//! its message, so the end of the run that claims it cannot be missed, and only runs of
//! that session wake it. (A subscription to the whole event bus would wake every waiter on
//! every event of every session: quadratic under load.)

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::mpsc;

use crate::events::RunEnded;

type Subscribers = HashMap<String, Vec<(u64, mpsc::UnboundedSender<Arc<RunEnded>>)>>;

/// `run.ended` events by session key, to the waiters of that session.
#[derive(Default)]
pub struct RunEndHub {
    subscribers: Arc<Mutex<Subscribers>>,
    next_id: AtomicU64,
}

impl RunEndHub {
    /// Start receiving the `run.ended` events of `session_key`; ends when dropped.
    pub fn subscribe(&self, session_key: &str) -> RunEnds {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        self.subscribers
            .lock()
            .entry(session_key.to_string())
            .or_default()
            .push((id, tx));
        RunEnds {
            rx,
            id,
            session_key: session_key.to_string(),
            subscribers: Arc::clone(&self.subscribers),
        }
    }

    /// Hand a run's end to the waiters of its session (copied once, only when it has some).
    pub fn publish(&self, end: &RunEnded) {
        if let Some(subs) = self.subscribers.lock().get(end.session_key.as_str()) {
            let end = Arc::new(end.clone());
            for (_, tx) in subs {
                let _ = tx.send(Arc::clone(&end));
            }
        }
    }

    /// Waiters subscribed right now (tests).
    pub fn len(&self) -> usize {
        self.subscribers.lock().values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One waiter's subscription; unsubscribes on drop.
pub struct RunEnds {
    rx: mpsc::UnboundedReceiver<Arc<RunEnded>>,
    id: u64,
    session_key: String,
    subscribers: Arc<Mutex<Subscribers>>,
}

impl Drop for RunEnds {
    fn drop(&mut self) {
        let mut subs = self.subscribers.lock();
        if let Some(list) = subs.get_mut(&self.session_key) {
            list.retain(|(id, _)| *id != self.id);
            if list.is_empty() {
                subs.remove(&self.session_key);
            }
        }
    }
}

/// How waiting for a message's run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunWait {
    /// The end of the run that took the message.
    Ended(Arc<RunEnded>),
    /// The hub went away (shutdown).
    Closed,
    TimedOut,
}

impl RunEnds {
    /// Wait, at most `limit`, for the end of the run that claimed inbox message `inbox_id`.
    pub async fn wait_for_claiming_run(&mut self, inbox_id: i64, limit: Duration) -> RunWait {
        let wait = async {
            while let Some(e) = self.rx.recv().await {
                if e.claimed(inbox_id) {
                    return RunWait::Ended(e);
                }
            }
            RunWait::Closed
        };
        tokio::time::timeout(limit, wait)
            .await
            .unwrap_or(RunWait::TimedOut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RunStatus;

    fn end(key: &str, run_id: &str, claimed: &[i64]) -> RunEnded {
        RunEnded {
            session_key: key.into(),
            run_id: Some(run_id.into()),
            status: RunStatus::Succeeded,
            error: None,
            reply: None,
            claimed: claimed.to_vec(),
        }
    }

    #[tokio::test]
    async fn a_waiter_gets_only_its_sessions_run_that_claimed_its_message() {
        let hub = RunEndHub::default();
        let mut a = hub.subscribe("agent:main:a");
        let _b = hub.subscribe("agent:main:b");
        assert_eq!(hub.len(), 2);
        hub.publish(&end("agent:main:b", "rb", &[7]));
        hub.publish(&end("agent:main:a", "r1", &[3]));
        hub.publish(&end("agent:main:a", "r2", &[4, 7]));
        match a.wait_for_claiming_run(7, Duration::from_secs(5)).await {
            RunWait::Ended(e) => assert_eq!(*e, end("agent:main:a", "r2", &[4, 7])),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            a.wait_for_claiming_run(9, Duration::from_millis(20)).await,
            RunWait::TimedOut
        );
        drop(a);
        assert_eq!(hub.len(), 1);
    }
}
