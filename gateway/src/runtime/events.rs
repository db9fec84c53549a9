//! The live events of this process: the bus every subscriber shares, the `run.ended`
//! waiters of each session, and (shared mode) the relay to the other processes, which the
//! cluster sets once it is started.

use std::sync::{Arc, OnceLock};

use tokio::sync::broadcast;

use super::run_ends::RunEndHub;
use crate::events::Event;

/// Capacity of the live event bus; slow subscribers skip events rather than block runs.
const EVENT_BUS: usize = 1024;

/// How events reach the other processes sharing the database (`cluster::bus`).
pub trait Relay: Send + Sync {
    /// Queue `event` for the other processes (never waits).
    fn publish(&self, event: &Arc<Event>);
    /// Whether another process asked to stop run `run_id` before it got here.
    fn was_stopped(&self, run_id: &str) -> bool;
}

/// The live event bus, the waiters of runs' ends, and the relay.
pub struct Events {
    bus: broadcast::Sender<Arc<Event>>,
    /// `run.ended` events for the waiters of one session (API `wait`, `/subagents send`).
    pub run_ends: RunEndHub,
    relay: OnceLock<Arc<dyn Relay>>,
}

impl Default for Events {
    fn default() -> Events {
        Events {
            bus: broadcast::channel(EVENT_BUS).0,
            run_ends: RunEndHub::default(),
            relay: OnceLock::new(),
        }
    }
}

impl Events {
    /// Receive every event emitted from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.bus.subscribe()
    }

    /// Publish a live event: a run's end to the waiters of its session, and every event
    /// on the bus (nothing is shared, or allocated, when nobody listens). In shared mode
    /// the other processes get it too.
    pub fn emit(&self, event: Event) {
        match self.relay.get() {
            None => self.emit_local(event),
            Some(relay) => {
                let event = Arc::new(event);
                relay.publish(&event);
                if let Event::RunEnded(end) = &*event {
                    self.run_ends.publish(end);
                }
                if self.bus.receiver_count() > 0 {
                    let _ = self.bus.send(event);
                }
            }
        }
    }

    /// [`Events::emit`] to this process's subscribers only (an event another process
    /// emitted, re-emitted here by the relay).
    pub fn emit_local(&self, event: Event) {
        if let Event::RunEnded(end) = &event {
            self.run_ends.publish(end);
        }
        if self.bus.receiver_count() == 0 {
            return;
        }
        let _ = self.bus.send(Arc::new(event));
    }

    /// Whether an event emitted now is heard: someone here subscribes, or (shared mode)
    /// the other processes may (a run's streamed text is built only then).
    pub fn is_heard(&self) -> bool {
        self.bus.receiver_count() > 0 || self.relay.get().is_some()
    }

    /// The relay, once set.
    pub fn relay(&self) -> Option<&Arc<dyn Relay>> {
        self.relay.get()
    }

    /// Set the relay (once; `cluster::bus::start`). `false` when one was set already.
    pub fn set_relay(&self, relay: Arc<dyn Relay>) -> bool {
        self.relay.set(relay).is_ok()
    }
}
