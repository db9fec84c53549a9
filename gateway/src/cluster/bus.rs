//! Shared mode's bus: the processes on one PostgreSQL database tell each other what they
//! emit and what to stop, over `LISTEN`/`NOTIFY` on one channel, [`CHANNEL`]
//! (docs/postgres.md, "Shared mode: the bus").
//!
//! - Out: `Runtime::emit` hands every event to [`Bus::publish`] (a bounded queue, never
//!   waiting); the publisher task sends what is queued in one `NOTIFY` statement, in
//!   order. Stops are sent by their caller, who waits for the send (`cluster::stop`).
//! - In: the listener task reads the notifications of the other processes (its own are
//!   skipped by owner id), re-emits their events to this process's own subscribers
//!   (`/ws`, `/api/events`, the waiters of `wait: true`) and applies their stops.
//!
//! Started by `app` in shared mode only (`rt.home.member` is `Some`); both tasks are in the
//! app's tracker and stop on its token. In standby mode and on SQLite there is no bus: no
//! listener, no `NOTIFY`, and `emit` costs what it did.
//!
//! Live events are best effort, as on one process (a slow `/ws` client skips events): an
//! event is dropped when the queue is full, or when its `NOTIFY` fails, and notifications
//! sent while a listener reconnects are lost to it. Nothing stored depends on them.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use switchboard_channels::backoff::Backoff;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::wire::{self, Msg, Received, Stop};
use super::Member;
use crate::events::Event;
use crate::runtime::Runtime;
use crate::store::pg::Listener;
use crate::store::{Store, StoreError};

/// The one `NOTIFY` channel of the gateway's processes (per database).
pub const CHANNEL: &str = "switchboard_bus";
/// Events waiting for the publisher; beyond this, new ones are dropped (and counted).
const OUTGOING: usize = 4096;
/// Most events sent in one `NOTIFY` statement.
const BATCH: usize = 64;
/// Waits between attempts at reconnecting the listener: from 250 ms, doubling to 10 s.
const RECONNECT: Backoff = Backoff::new(Duration::from_millis(250), Duration::from_secs(10));
/// Run ids a stop named that this process remembers, to stop them should they start here
/// later (the oldest forgotten first).
const STOPPED_RUNS: usize = 4096;
/// A refused payload is logged the first time and then every this many.
const LOG_EVERY: u64 = 1000;

/// This process's end of the bus (`bus::of`).
pub struct Bus {
    owner: Arc<str>,
    seq: AtomicU64,
    outgoing: mpsc::Sender<Arc<Event>>,
    /// Payloads sent (events, their parts, stops).
    sent: AtomicU64,
    /// Notifications of other processes taken (events re-emitted here, stops applied).
    received: AtomicU64,
    /// Events not sent: the queue was full, their `NOTIFY` failed, or they did not fit.
    dropped: AtomicU64,
    /// Payloads from others that were refused (not a bus message of this version).
    refused: AtomicU64,
    stopped: Mutex<StoppedRuns>,
}

impl Bus {
    /// Queue `event` for the other processes (never waits; dropped when the queue is full).
    pub fn publish(&self, event: &Arc<Event>) {
        if self.outgoing.try_send(Arc::clone(event)).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed);
            if n % LOG_EVERY == 0 {
                tracing::warn!(dropped = n + 1, "bus: events queued faster than they are sent; dropping some (other processes' live streams miss them)");
            }
        }
    }

    /// Tell every other process to apply `stop`; waits for the `NOTIFY`.
    pub async fn send_stop(&self, store: &Store, stop: &Stop) -> Result<(), StoreError> {
        let Some(payload) = wire::encode_stop(&self.owner, self.next_seq(), stop) else {
            tracing::warn!(session = %stop.session_key, "bus: a stop too large to send");
            return Ok(());
        };
        store.notify(CHANNEL, &[payload]).await?;
        self.sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Whether a stop named run `run_id` (it is to stop as soon as it starts here).
    pub fn was_stopped(&self, run_id: &str) -> bool {
        self.stopped.lock().set.contains(run_id)
    }

    /// Remember `runs` as stopped.
    pub(crate) fn remember_stopped(&self, runs: &[String]) {
        let mut stopped = self.stopped.lock();
        for id in runs {
            stopped.insert(id);
        }
    }

    /// This process's owner id.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Events not sent so far (queue full, too large).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed)
    }
}

/// A bounded set of run ids, oldest out first.
#[derive(Default)]
struct StoppedRuns {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl StoppedRuns {
    fn insert(&mut self, id: &str) {
        if !self.set.insert(id.to_string()) {
            return;
        }
        self.order.push_back(id.to_string());
        if self.order.len() > STOPPED_RUNS {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }
}

/// Start the bus of `rt` (shared mode): listen first, so nothing sent after this returns
/// is missed, then make `bus::of` answer and spawn the publisher and the listener into
/// `tasks`, both stopping on `cancel`. Fails when the listening connection cannot be made.
pub async fn start(
    rt: &Arc<Runtime>,
    member: &Member,
    tasks: &TaskTracker,
    cancel: CancellationToken,
) -> Result<(), StoreError> {
    let Some(listener) = rt.store.listener(&[CHANNEL], RECONNECT).await? else {
        return Ok(());
    };
    let (tx, rx) = mpsc::channel(OUTGOING);
    let bus = Arc::new(Bus {
        owner: member.owner.clone(),
        seq: AtomicU64::new(0),
        outgoing: tx,
        sent: AtomicU64::new(0),
        received: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        stopped: Mutex::default(),
    });
    if rt.parts.get::<Started>().0.set(bus.clone()).is_err() || !rt.events.set_relay(bus.clone()) {
        tracing::warn!("bus: already started");
        return Ok(());
    }
    tracing::info!(channel = CHANNEL, pid = ?listener.backend_pid(), "bus: listening");
    tasks.spawn(publish_loop(
        rt.store.clone(),
        bus.clone(),
        rx,
        cancel.clone(),
    ));
    tasks.spawn(listen_loop(rt.clone(), bus, listener, cancel));
    Ok(())
}

/// Send queued events, up to [`BATCH`] a statement, until `cancel` fires.
async fn publish_loop(
    store: Store,
    bus: Arc<Bus>,
    mut rx: mpsc::Receiver<Arc<Event>>,
    cancel: CancellationToken,
) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        let got = tokio::select! {
            n = rx.recv_many(&mut batch, BATCH) => n,
            _ = cancel.cancelled() => 0,
        };
        if got == 0 {
            return;
        }
        let mut payloads = Vec::with_capacity(batch.len());
        for event in batch.drain(..) {
            let parts = wire::encode_event(&bus.owner, || bus.next_seq(), &event);
            if parts.is_empty() {
                bus.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(scope = ?event.scope(), "bus: an event too large to send, even shrunk");
            }
            payloads.extend(parts);
        }
        let n = payloads.len() as u64;
        if let Err(e) = store.notify(CHANNEL, &payloads).await {
            bus.dropped
                .fetch_add(payloads.len() as u64, Ordering::Relaxed);
            tracing::warn!(error = %e, events = payloads.len(), "bus: cannot send events to the other processes");
        } else {
            bus.sent.fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// Take the other processes' notifications until `cancel` fires.
async fn listen_loop(
    rt: Arc<Runtime>,
    bus: Arc<Bus>,
    mut listener: Listener,
    cancel: CancellationToken,
) {
    loop {
        let n = tokio::select! {
            n = listener.recv() => n,
            _ = cancel.cancelled() => return,
        };
        take(&rt, &bus, &n.payload).await;
    }
}

/// One notification: skip our own, refuse what is not a bus message, else deliver.
async fn take(rt: &Arc<Runtime>, bus: &Bus, payload: &str) {
    let env = match wire::decode(payload) {
        Ok(env) => env,
        Err(e) => return refuse(bus, &e),
    };
    if env.from == *bus.owner {
        return;
    }
    bus.received.fetch_add(1, Ordering::Relaxed);
    match env.msg {
        Msg::Stop(stop) => {
            super::stop::apply(rt, &stop);
        }
        Msg::Event(carried) => deliver(rt, carried.into_received()).await,
    }
}

fn refuse(bus: &Bus, e: &wire::WireError) {
    let n = bus.refused.fetch_add(1, Ordering::Relaxed);
    if n % LOG_EVERY == 0 {
        tracing::warn!(error = %e, refused = n + 1, "bus: refused a notification");
    }
}

/// Re-emit another process's event here; a reply sent by reference is read from its run.
async fn deliver(rt: &Arc<Runtime>, received: Received) {
    let Received {
        mut event,
        reply_in_store,
        waiters_only,
    } = received;
    if let (true, Event::RunEnded(end)) = (reply_in_store, &mut event) {
        if let Some(id) = &end.run_id {
            match rt.store.get_run(id).await {
                Ok(Some(run)) => {
                    end.reply = run.reply;
                    end.error = run.error;
                }
                Ok(None) => {
                    tracing::warn!(run_id = %id, "bus: a run's end names a run not in the store")
                }
                Err(e) => {
                    tracing::warn!(run_id = %id, error = %e, "bus: cannot read a run's reply")
                }
            }
        }
    }
    match &event {
        Event::RunEnded(end) if waiters_only => rt.events.run_ends.publish(end),
        _ => rt.events.emit_local(event),
    }
}

/// The bus of this process once started (shared mode), kept in the runtime's parts.
#[derive(Default)]
struct Started(std::sync::OnceLock<Arc<Bus>>);

/// This process's end of the bus: `None` until started, and always without shared mode.
pub fn of(rt: &Runtime) -> Option<Arc<Bus>> {
    rt.parts.get::<Started>().0.get().cloned()
}

impl crate::runtime::Relay for Bus {
    fn publish(&self, event: &Arc<Event>) {
        Bus::publish(self, event)
    }

    fn was_stopped(&self, run_id: &str) -> bool {
        Bus::was_stopped(self, run_id)
    }
}

/// The bus's counters for `/metrics` (nothing without a bus).
pub fn metrics(bus: Option<&Arc<Bus>>, out: &mut String) {
    use std::fmt::Write;
    let Some(bus) = bus else {
        return;
    };
    for (name, value) in [
        ("switchboard_bus_sent_total", &bus.sent),
        ("switchboard_bus_received_total", &bus.received),
        ("switchboard_bus_dropped_total", &bus.dropped),
        ("switchboard_bus_refused_total", &bus.refused),
    ] {
        let _ = writeln!(out, "# TYPE {name} counter");
        let _ = writeln!(out, "{name} {}", value.load(Ordering::Relaxed));
    }
}

#[cfg(test)]
#[path = "bus_tests.rs"]
mod tests;
