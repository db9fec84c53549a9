//! Envelopes Slack delivers more than once (a retry after a slow or lost ack, the
//! redelivery of unacked envelopes on a new connection, the `message` and `app_mention`
//! events of one mention) are handled once: the first delivery of a key is handled, a
//! later one waits for that handling's outcome and is only acked. A handling that failed
//! forgets its key, so the next delivery is handled anew. Bounded: the oldest keys go.

use std::collections::{HashMap, VecDeque};

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;

/// Most keys remembered.
pub(super) const MAX_KEYS: usize = 4096;

/// What a delivery of a key should do.
pub(super) enum Begin {
    /// The first: handle it, then report the outcome through [`Handling::finish`].
    First(Handling),
    /// Seen before: wait for the outcome (`Some(true)`: taken; `Some(false)`: failed).
    Again(watch::Receiver<Option<bool>>),
}

#[derive(Default)]
pub(super) struct Seen {
    inner: Arc<Mutex<Keys>>,
}

#[derive(Default)]
struct Keys {
    map: HashMap<String, watch::Receiver<Option<bool>>>,
    order: VecDeque<String>,
}

/// The first delivery's handle: reports how its handling ended.
pub(super) struct Handling {
    keys: Arc<Mutex<Keys>>,
    key: String,
    tx: watch::Sender<Option<bool>>,
}

impl Seen {
    pub(super) fn begin(&self, key: &str) -> Begin {
        let mut keys = self.inner.lock();
        if let Some(rx) = keys.map.get(key) {
            return Begin::Again(rx.clone());
        }
        let (tx, rx) = watch::channel(None);
        keys.map.insert(key.to_owned(), rx);
        keys.order.push_back(key.to_owned());
        while keys.order.len() > MAX_KEYS {
            if let Some(old) = keys.order.pop_front() {
                keys.map.remove(&old);
            }
        }
        Begin::First(Handling {
            keys: self.inner.clone(),
            key: key.to_owned(),
            tx,
        })
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.inner.lock().map.len()
    }
}

impl Handling {
    /// The handling ended: `taken` (committed or deliberately dropped) or not.
    pub(super) fn finish(self, taken: bool) {
        if taken {
            let _ = self.tx.send(Some(true));
        }
        // Not taken: `drop` forgets the key and reports the failure.
    }

    fn forget(&self) {
        let mut keys = self.keys.lock();
        keys.map.remove(&self.key);
        keys.order.retain(|k| k != &self.key);
    }
}

impl Drop for Handling {
    /// A handling that did not end taken (failed, or abandoned when its task stopped)
    /// forgets its key, so the next delivery is handled anew.
    fn drop(&mut self) {
        if self.tx.borrow().is_none() {
            self.forget();
            let _ = self.tx.send(Some(false));
        }
    }
}

/// Waits for the first delivery's outcome; `false` when it failed or was abandoned.
pub(super) async fn outcome(mut rx: watch::Receiver<Option<bool>>) -> bool {
    match rx.wait_for(Option::is_some).await {
        Ok(v) => v.unwrap_or(false),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_key_is_handled_once_and_again_after_a_failure() {
        let seen = Seen::default();
        let Begin::First(first) = seen.begin("a") else {
            panic!("first delivery not handled");
        };
        let Begin::Again(rx) = seen.begin("a") else {
            panic!("second delivery handled again");
        };
        first.finish(true);
        assert!(outcome(rx).await);
        assert!(matches!(seen.begin("a"), Begin::Again(_)));

        let Begin::First(b) = seen.begin("b") else {
            panic!("b");
        };
        b.finish(false);
        assert!(
            matches!(seen.begin("b"), Begin::First(_)),
            "a failed key is handled anew"
        );
    }

    #[test]
    fn the_oldest_keys_go_past_the_bound() {
        let seen = Seen::default();
        for i in 0..MAX_KEYS + 10 {
            if let Begin::First(h) = seen.begin(&i.to_string()) {
                h.finish(true);
            }
        }
        assert_eq!(seen.len(), MAX_KEYS);
        assert!(matches!(seen.begin("0"), Begin::First(_)));
    }
}
