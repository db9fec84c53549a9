//! The runtime: the floor every part of the daemon stands on, as ten small handles
//! (store, config, home, lanes, events, channels, runs, tasks, http, parts) built once by
//! `app` and passed explicitly. What the floors above keep for the whole process (the
//! agent's tools, sub-agents' announces, the MCP servers, the cluster's bus) is in
//! `parts`, put there by `app`: the runtime holds it without importing a floor above.

mod channels;
mod events;
mod home;
mod http;
mod parts;
pub mod roots;
pub mod run_ends;
mod runs;
mod tasks;

use std::sync::Arc;

use switchboard_channels::Channel;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use channels::Channels;
pub use events::{Events, Relay};
pub use home::{Home, Member};
pub use http::{EnvKeys, Http};
pub use parts::Parts;
pub use runs::{ActiveRun, CancelReason, Runs};
pub use tasks::Tasks;

use crate::config::Config;
use crate::events::Event;
use crate::queue::Lanes;
use crate::store::Store;

pub struct Runtime {
    pub store: Store,
    pub config: watch::Receiver<Arc<Config>>,
    /// The state dir, the agent definitions, this process's membership.
    pub home: Home,
    pub lanes: Lanes,
    /// The live events, the waiters of runs' ends, the relay to other processes.
    pub events: Events,
    /// The chat channels running here.
    pub channels: Channels,
    /// The runs in progress here.
    pub runs: Runs,
    /// The background jobs' owner, the shutdown token, the workers' wake-ups.
    pub tasks: Tasks,
    /// The outgoing HTTP client and the API keys from the environment.
    pub http: Http,
    /// The upper floors' shared values (`Parts`).
    pub parts: Parts,
}

impl Runtime {
    pub fn new(
        store: Store,
        config: watch::Receiver<Arc<Config>>,
        env_keys: EnvKeys,
        home: Home,
        shutdown: CancellationToken,
        parts: Parts,
    ) -> Arc<Runtime> {
        let cfg = config.borrow().clone();
        let lanes = Lanes::new(
            cfg.agents.defaults.max_concurrent as usize,
            cfg.agents.defaults.subagents.max_concurrent as usize,
            cfg.cron.max_concurrent as usize,
        );
        Arc::new(Runtime {
            store,
            config,
            home,
            lanes,
            events: Events::default(),
            channels: Channels::default(),
            runs: Runs::default(),
            tasks: Tasks::new(shutdown),
            http: Http::new(env_keys),
            parts,
        })
    }

    /// The config in force right now.
    pub fn config(&self) -> Arc<Config> {
        self.config.borrow().clone()
    }

    /// The agents in force under `cfg` (the config in force).
    pub fn agents(&self, cfg: &Arc<Config>) -> Arc<crate::agents::Registry> {
        self.home.agents.registry(cfg)
    }

    pub fn channel(&self, id: &str) -> Option<Arc<dyn Channel>> {
        self.channels.get(id)
    }

    pub fn active_run(&self, session_key: &str) -> Option<ActiveRun> {
        self.runs.get(session_key)
    }

    pub(crate) fn set_active(&self, session_key: &str, run: ActiveRun) {
        self.runs.insert(session_key, run.clone());
        // Shared mode: a stop that named this run before it got here (`cluster::stop`).
        // Looked at after registering: a stop applied meanwhile sees the run instead.
        if let Some(relay) = self.events.relay() {
            if relay.was_stopped(&run.run_id) {
                run.cancel(CancelReason::User);
            }
        }
    }

    pub(crate) fn clear_active(&self, session_key: &str, run_id: &str) {
        self.runs.remove(session_key, run_id);
    }

    /// Publish a live event ([`Events::emit`]).
    pub fn emit(&self, event: Event) {
        self.events.emit(event)
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
            Home::new(dir.path().to_path_buf(), None),
            CancellationToken::new(),
            Parts::default(),
        );
        (dir, rt)
    }
}
