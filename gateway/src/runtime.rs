//! The runtime: the shared parts every request and run needs (store, lanes, live config,
//! channels, active runs, event bus), built once by `app` and passed explicitly.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use switchboard_channels::Channel;
use tokio::sync::{broadcast, watch, Notify};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::agent::prompt::{Bootstrap, FRESH_FOR};
use crate::agent::tools::ToolRegistry;
use crate::agent::waiters::RunEndHub;
use crate::config::Config;
use crate::events::Event;
use crate::queue::Lanes;
use crate::store::Store;

/// Capacity of the live event bus; slow subscribers skip events rather than block runs.
const EVENT_BUS: usize = 1024;
/// Announce steps running at once.
const ANNOUNCE_CONCURRENCY: usize = 16;

/// API keys picked up from the environment at start (never re-read mid-run).
#[derive(Debug, Clone, Default)]
pub struct EnvKeys {
    pub openai: Option<String>,
    pub anthropic: Option<String>,
}

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

pub struct Runtime {
    pub store: Store,
    pub lanes: Lanes,
    pub config: watch::Receiver<Arc<Config>>,
    /// The model providers' client (and hooks'); made on first use, with the system's
    /// trust roots and SSL_CERT_FILE's (`agent::provider::roots`).
    pub http: std::sync::LazyLock<reqwest::Client>,
    pub env_keys: EnvKeys,
    /// The built-in tools and the MCP servers' (each run takes those its policy allows).
    pub tools: ToolRegistry,
    /// MCP servers (started by `app`; their tools reach runs through `tools`).
    pub mcp: Arc<crate::mcp::McpHub>,
    /// Scheduled jobs: wakes the scheduler when a job changes.
    pub cron_wake: Notify,
    /// Workspace bootstrap files, as read lately (see `prompt::FRESH_FOR`).
    pub bootstrap: Bootstrap,
    /// The agent definitions in force (built-ins, agent files, `agents.list`).
    pub agents: crate::agents::Catalog,
    pub state_dir: PathBuf,
    pub channels: Mutex<HashMap<String, Arc<dyn Channel>>>,
    active: Mutex<HashMap<String, ActiveRun>>,
    pub outbox_wake: Notify,
    /// Wakes the timer worker when a timer is added.
    pub timers_wake: Notify,
    /// Owner of short background jobs (delayed retries, slow commands).
    pub tasks: TaskTracker,
    /// Bounds concurrent announce steps (each may call the model).
    pub announce_permits: tokio::sync::Semaphore,
    /// Announces scheduled or running in this process (one at a time per run).
    pub announcing: crate::subagents::announce::InFlight,
    /// The live events (`crate::events`), shared by every subscriber.
    pub events: broadcast::Sender<Arc<Event>>,
    /// `run.ended` events for the waiters of one session (API `wait`, `/subagents send`).
    pub run_ends: RunEndHub,
    /// Sub-agents' progress lines: one worker per child with a line to show.
    pub progress: crate::subagents::progress::ProgressHub,
    /// Fired once on shutdown; every run's token is a child of it.
    pub shutdown: CancellationToken,
    /// This process as one of several active on its database (shared mode); `None` when
    /// it is the one process that acts (SQLite, standby mode).
    pub member: Option<crate::cluster::Member>,
    /// Shared mode's bus (`cluster::bus`), set once when `app` starts it; unset otherwise.
    bus: std::sync::OnceLock<Arc<crate::cluster::bus::Bus>>,
    /// Models in an outage and the chats told (model fallbacks).
    pub outages: crate::agent::outages::Outages,
    /// This process's model calls: tokens, cost and latency per model (`/metrics`).
    pub model_metrics: crate::agent::usage::ModelMetrics,
    /// How long turns, tool calls and channel sends take (`/metrics`).
    pub latency: crate::latency::Latency,
}

impl Runtime {
    pub fn new(
        store: Store,
        config: watch::Receiver<Arc<Config>>,
        env_keys: EnvKeys,
        state_dir: PathBuf,
        shutdown: CancellationToken,
        member: Option<crate::cluster::Member>,
    ) -> Arc<Runtime> {
        let cfg = config.borrow().clone();
        let lanes = Lanes::new(
            cfg.agents.defaults.max_concurrent as usize,
            cfg.agents.defaults.subagents.max_concurrent as usize,
            cfg.cron.max_concurrent as usize,
        );
        let mcp = Arc::new(crate::mcp::McpHub::default());
        Arc::new(Runtime {
            store,
            lanes,
            config,
            http: std::sync::LazyLock::new(crate::agent::provider::roots::client),
            env_keys,
            tools: ToolRegistry::builtin().with_provider(mcp.clone()),
            mcp,
            cron_wake: Notify::new(),
            bootstrap: Bootstrap::new(FRESH_FOR),
            agents: crate::agents::Catalog::new(
                state_dir.clone(),
                crate::agents::sources::FRESH_FOR,
            ),
            state_dir,
            channels: Mutex::new(HashMap::new()),
            active: Mutex::new(HashMap::new()),
            outbox_wake: Notify::new(),
            timers_wake: Notify::new(),
            tasks: TaskTracker::new(),
            announce_permits: tokio::sync::Semaphore::new(ANNOUNCE_CONCURRENCY),
            announcing: Default::default(),
            events: broadcast::channel(EVENT_BUS).0,
            run_ends: RunEndHub::default(),
            progress: Default::default(),
            shutdown,
            member,
            bus: std::sync::OnceLock::new(),
            outages: Default::default(),
            model_metrics: Default::default(),
            latency: Default::default(),
        })
    }

    /// The config in force right now.
    pub fn config(&self) -> Arc<Config> {
        self.config.borrow().clone()
    }

    /// The agents in force under `cfg` (the config in force).
    pub fn agents(&self, cfg: &Arc<Config>) -> Arc<crate::agents::Registry> {
        self.agents.registry(cfg)
    }

    pub fn channel(&self, id: &str) -> Option<Arc<dyn Channel>> {
        self.channels.lock().get(id).cloned()
    }

    pub fn register_channel(&self, ch: Arc<dyn Channel>) {
        self.channels.lock().insert(ch.id().to_string(), ch);
    }

    pub fn unregister_channel(&self, id: &str) {
        self.channels.lock().remove(id);
    }

    pub fn active_run(&self, session_key: &str) -> Option<ActiveRun> {
        self.active.lock().get(session_key).cloned()
    }

    pub fn active_runs(&self) -> Vec<(String, ActiveRun)> {
        self.active
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub(crate) fn set_active(&self, session_key: &str, run: ActiveRun) {
        self.active
            .lock()
            .insert(session_key.to_string(), run.clone());
        // Shared mode: a stop that named this run before it got here (`cluster::stop`).
        // Looked at after registering: a stop applied meanwhile sees the run instead.
        if let Some(bus) = self.bus.get() {
            if bus.was_stopped(&run.run_id) {
                run.cancel(CancelReason::User);
            }
        }
    }

    pub(crate) fn clear_active(&self, session_key: &str, run_id: &str) {
        let mut map = self.active.lock();
        if map.get(session_key).is_some_and(|r| r.run_id == run_id) {
            map.remove(session_key);
        }
    }

    /// Publish a live event: a run's end to the waiters of its session, and every event
    /// on the bus (nothing is shared, or allocated, when nobody listens). In shared mode
    /// the other processes get it too (`cluster::bus`).
    pub fn emit(&self, event: Event) {
        match self.bus.get() {
            None => self.emit_local(event),
            Some(bus) => {
                let event = Arc::new(event);
                bus.publish(&event);
                if let Event::RunEnded(end) = &*event {
                    self.run_ends.publish(end);
                }
                if self.events.receiver_count() > 0 {
                    let _ = self.events.send(event);
                }
            }
        }
    }

    /// [`Runtime::emit`] to this process's subscribers only (an event another process
    /// emitted, re-emitted here by the bus).
    pub fn emit_local(&self, event: Event) {
        if let Event::RunEnded(end) = &event {
            self.run_ends.publish(end);
        }
        if self.events.receiver_count() == 0 {
            return;
        }
        let _ = self.events.send(Arc::new(event));
    }

    /// Whether an event emitted now is heard: someone here subscribes, or (shared mode)
    /// the other processes may (a run's streamed text is built only then).
    pub fn is_heard(&self) -> bool {
        self.events.receiver_count() > 0 || self.bus.get().is_some()
    }

    /// Shared mode's bus, once started.
    pub fn bus(&self) -> Option<&Arc<crate::cluster::bus::Bus>> {
        self.bus.get()
    }

    /// Set the bus (once; `cluster::bus::start`).
    pub(crate) fn set_bus(
        &self,
        bus: Arc<crate::cluster::bus::Bus>,
    ) -> Result<(), Arc<crate::cluster::bus::Bus>> {
        self.bus.set(bus)
    }
}

/// Runtimes for the crate's tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testing {
    use super::*;

    /// A runtime with `config` (JSON5) in force, on a fresh file store in a temp dir (the
    /// state dir too; keep the dir alive as long as the runtime).
    pub(crate) async fn runtime(config: &str) -> (tempfile::TempDir, Arc<Runtime>) {
        let cfg = crate::config::parse_config(config, &|_| None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = Store::open(&url).await.unwrap();
        with_store(cfg, store, dir)
    }

    /// The same on an in-memory store: it has no checkpoint task, so a test on tokio's
    /// paused clock sees only the timers it is about.
    pub(crate) async fn runtime_in_memory(config: &str) -> (tempfile::TempDir, Arc<Runtime>) {
        let cfg = crate::config::parse_config(config, &|_| None).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_in_memory().await.unwrap();
        with_store(cfg, store, dir)
    }

    /// The same on `store` (e.g. one on PostgreSQL), with a temp dir for the state dir.
    pub(crate) fn runtime_on(config: &str, store: Store) -> (tempfile::TempDir, Arc<Runtime>) {
        let cfg = crate::config::parse_config(config, &|_| None).unwrap();
        with_store(cfg, store, tempfile::tempdir().unwrap())
    }

    fn with_store(
        cfg: crate::config::Config,
        store: Store,
        dir: tempfile::TempDir,
    ) -> (tempfile::TempDir, Arc<Runtime>) {
        let (_tx, rx) = watch::channel(Arc::new(cfg));
        let rt = Runtime::new(
            store,
            rx,
            EnvKeys::default(),
            dir.path().to_path_buf(),
            CancellationToken::new(),
            None,
        );
        (dir, rt)
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
