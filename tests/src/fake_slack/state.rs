//! Shared state of the fake Slack: channels and messages, the Web API's records, the Socket
//! Mode envelopes with their deliveries and acks, the live connection, and wake-ups.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

use super::types::{Call, Envelope, Ephemeral, Failure, Posted, Update, Upload};

/// Slack redelivers an envelope not acked within this (its ack deadline is 3 s).
pub(super) const REDELIVER_AFTER: Duration = Duration::from_secs(3);
/// Slack gives up on an envelope after this many retries.
pub(super) const MAX_RETRIES: u32 = 3;

/// A frame for a Socket Mode connection's writer.
#[derive(Debug)]
pub(super) enum Outbound {
    Text(String),
    /// A close frame, then end.
    Close,
    /// End without a close frame (socket loss).
    Cut,
}

/// The connection envelopes go to (the newest one).
#[derive(Debug)]
pub(super) struct Live {
    pub(super) conn: usize,
    pub(super) tx: mpsc::UnboundedSender<Outbound>,
}

/// A message in a channel (a person's or the bot's).
#[derive(Debug, Clone)]
pub(super) struct Msg {
    pub(super) ts: String,
    pub(super) by_bot: bool,
}

/// A file between `files.getUploadURLExternal` and `files.completeUploadExternal`.
#[derive(Debug, Clone)]
pub(super) struct PendingFile {
    pub(super) filename: String,
    pub(super) length: u64,
    pub(super) bytes: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
pub(super) struct World {
    /// Known channels: id → messages in it.
    pub(super) channels: HashMap<String, Vec<Msg>>,
    pub(super) posted: Vec<Posted>,
    pub(super) updates: Vec<Update>,
    pub(super) ephemerals: Vec<Ephemeral>,
    pub(super) uploads: Vec<Upload>,
    pub(super) files: HashMap<String, PendingFile>,
    pub(super) calls: Vec<Call>,
    pub(super) failures: HashMap<String, VecDeque<Failure>>,
    /// A method rate-limited until this instant.
    pub(super) limited_until: HashMap<String, Instant>,
    pub(super) violations: Vec<String>,
    pub(super) next_ts: u64,
    pub(super) next_id: u64,
    pub(super) envelopes: Vec<Envelope>,
    /// When each envelope was last written to a connection.
    pub(super) delivered_at: HashMap<String, Instant>,
    /// Envelopes waiting for a connection, in order.
    pub(super) queue: VecDeque<String>,
    pub(super) live: Option<Live>,
    pub(super) tickets: HashSet<String>,
    /// Socket Mode connections opened so far.
    pub(super) connections: usize,
    pub(super) redeliver_after: Option<Duration>,
    /// Files people shared, by id (`shared`).
    pub(super) hosted: HashMap<String, super::shared::Hosted>,
    pub(super) downloads: Vec<super::shared::Download>,
}

impl World {
    pub(super) fn violation(&mut self, what: impl Into<String>) {
        let what = what.into();
        tracing::warn!(violation = %what, "fake Slack");
        self.violations.push(what);
    }

    /// The next message timestamp (`1700000000.000001`, increasing).
    pub(super) fn ts(&mut self) -> String {
        self.next_ts += 1;
        format!("1700000000.{:06}", self.next_ts)
    }

    /// A fresh id with `prefix` (`F` files, `Ev` events, …).
    pub(super) fn id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{:08}", self.next_id)
    }

    pub(super) fn envelope_mut(&mut self, id: &str) -> Option<&mut Envelope> {
        self.envelopes.iter_mut().find(|e| e.envelope_id == id)
    }

    /// Write envelope `id` to the live connection (with `retry_attempt` = deliveries so
    /// far), or queue it for the next one.
    pub(super) fn deliver(&mut self, id: &str, reason: &str) {
        let Some(tx) = self.live.as_ref().map(|l| l.tx.clone()) else {
            if !self.queue.iter().any(|q| q == id) {
                self.queue.push_back(id.to_owned());
            }
            return;
        };
        let Some(env) = self.envelope_mut(id) else {
            return;
        };
        let frame = serde_json::json!({
            "envelope_id": env.envelope_id,
            "type": env.kind,
            "payload": env.payload,
            "accepts_response_payload": env.kind != "events_api",
            "retry_attempt": env.deliveries,
            "retry_reason": if env.deliveries == 0 { "" } else { reason },
        });
        env.deliveries += 1;
        let _ = tx.send(Outbound::Text(frame.to_string()));
        self.delivered_at.insert(id.to_owned(), Instant::now());
    }

    /// Record a new envelope and deliver it.
    pub(super) fn push_envelope(&mut self, kind: &str, payload: serde_json::Value) -> String {
        let envelope_id = uuid::Uuid::new_v4().to_string();
        self.envelopes.push(Envelope {
            envelope_id: envelope_id.clone(),
            kind: kind.to_owned(),
            payload,
            deliveries: 0,
            acks: 0,
        });
        self.deliver(&envelope_id, "");
        envelope_id
    }

    /// Envelopes delivered, unacked, and due for a retry.
    pub(super) fn due(&self, now: Instant) -> Vec<String> {
        let after = self.redeliver_after.unwrap_or(REDELIVER_AFTER);
        self.envelopes
            .iter()
            .filter(|e| e.acks == 0 && e.deliveries > 0 && e.deliveries <= MAX_RETRIES)
            .filter(|e| {
                self.delivered_at
                    .get(&e.envelope_id)
                    .is_some_and(|t| now.duration_since(*t) >= after)
            })
            .map(|e| e.envelope_id.clone())
            .collect()
    }
}

#[derive(Debug)]
pub(super) struct State {
    pub(super) bot_token: String,
    pub(super) app_token: String,
    pub(super) base: String,
    pub(super) cancel: CancellationToken,
    world: Mutex<World>,
    changed: Notify,
}

impl State {
    pub(super) fn new(bot_token: &str, app_token: &str, base: String) -> State {
        State {
            bot_token: bot_token.to_owned(),
            app_token: app_token.to_owned(),
            base,
            cancel: CancellationToken::new(),
            world: Mutex::new(World::default()),
            changed: Notify::new(),
        }
    }

    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn read<R>(&self, read: impl FnOnce(&World) -> R) -> R {
        read(&self.world())
    }

    /// Changes the world, then wakes every waiter.
    pub(super) fn change<R>(&self, change: impl FnOnce(&mut World) -> R) -> R {
        let result = change(&mut self.world());
        self.changed.notify_waiters();
        result
    }

    /// Waits, without polling, until `ready` holds; woken by every change.
    pub(super) async fn wait_until(
        &self,
        timeout: Duration,
        ready: impl Fn(&World) -> bool,
    ) -> Result<(), tokio::time::error::Elapsed> {
        tokio::time::timeout(timeout, async {
            loop {
                let notified = self.changed.notified();
                let mut notified = std::pin::pin!(notified);
                notified.as_mut().enable();
                if self.read(&ready) {
                    return;
                }
                notified.await;
            }
        })
        .await
    }
}

/// Redeliver unacked envelopes as Slack does, until the fake stops.
pub(super) async fn redeliver(state: std::sync::Arc<State>) {
    loop {
        tokio::select! {
            _ = state.cancel.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        state.change(|world| {
            if world.live.is_none() {
                return;
            }
            for id in world.due(Instant::now()) {
                world.deliver(&id, "timeout");
            }
        });
    }
}
