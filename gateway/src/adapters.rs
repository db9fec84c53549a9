//! The running channel adapters: every registered kind (`crate::channels::KINDS`) built
//! from its config section when enabled, registered with the runtime,
//! run under the supervisor (`supervisor.rs`), and restarted one by one when their
//! `channels.<id>` section changes on reload. In shared mode (`rt.home.member`) every process
//! registers each adapter for sending, and its inbound side (Telegram's poller or webhook
//! registration, Discord's gateway session) runs only while this process holds the
//! channel's lease, `channel:<id>` (`cluster::hold`).

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use switchboard_channels::webchat::WebChat;
use switchboard_channels::{Channel, InboundSink};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::channels::{BuildContext, Built, ChannelKind, Everywhere, FenceSlot, KINDS};
use crate::cluster::hold::{channel_lease, hold};
use crate::cluster::Member;
use crate::config::{Config, SharedEnv};
use crate::runtime::Runtime;
use crate::store::Lease;

/// A running adapter and the config section it was built from.
struct Running {
    section: serde_json::Value,
    cancel: CancellationToken,
    /// Shared mode: the lease loop of its inbound side (a replacement waits for it to
    /// release the lease before taking it).
    inbound: Option<JoinHandle<()>>,
    /// The adapter as its own type (`Adapters::handle`).
    handle: Arc<dyn Any + Send + Sync>,
}

pub struct Adapters {
    rt: Arc<Runtime>,
    sink: InboundSink,
    env: SharedEnv,
    tasks: TaskTracker,
    /// Parent of every adapter's token: fired at shutdown.
    cancel: CancellationToken,
    running: Mutex<HashMap<&'static str, Running>>,
    /// The process's web chat (shared with the HTTP server).
    webchat: Arc<WebChat>,
    restarts: Arc<crate::supervisor::Restarts>,
    /// The `gateway` lease this process holds (PostgreSQL, standby mode): Telegram's offset
    /// is written under its fence. `None` on SQLite and in shared mode, where the channel's
    /// own lease fences it.
    standby_lease: Option<Lease>,
}

impl Adapters {
    pub fn new(
        rt: Arc<Runtime>,
        sink: InboundSink,
        env: SharedEnv,
        tasks: TaskTracker,
        cancel: CancellationToken,
        standby_lease: Option<Lease>,
        webchat: Arc<WebChat>,
    ) -> Adapters {
        Adapters {
            standby_lease,
            webchat,
            rt,
            sink,
            env,
            tasks,
            cancel,
            running: Mutex::new(HashMap::new()),
            restarts: Arc::default(),
        }
    }

    /// Bring the adapters in line with `cfg`: start, stop, or restart what changed, for
    /// every registered channel kind.
    pub fn apply(&self, cfg: &Config) {
        for kind in KINDS {
            let Some(section) = cfg.channels.section(kind.id()) else {
                continue;
            };
            self.apply_one(*kind, section.to_json(), section.enabled(), cfg);
        }
    }

    fn apply_one(
        &self,
        kind: &'static dyn ChannelKind,
        section: serde_json::Value,
        enabled: bool,
        cfg: &Config,
    ) {
        let id = kind.id();
        let mut running = self.running.lock();
        match running.get(id) {
            Some(r) if r.section == section => return,
            None if !enabled => return,
            _ => {}
        }
        let mut previous = None;
        if let Some(old) = running.remove(id) {
            tracing::info!(channel = id, "{id}: stopping (config changed)");
            // In shared mode the old lease loop stops the inbound side and releases the
            // channel's lease (another process may take it over).
            old.cancel.cancel();
            previous = old.inbound;
            self.rt.channels.unregister(id);
        }
        if !enabled {
            return;
        }
        let cx = BuildContext {
            rt: &self.rt,
            env: &self.env,
            standby_lease: self.standby_lease.as_ref(),
            webchat: &self.webchat,
        };
        let Built {
            adapter,
            handle,
            fence,
            everywhere,
        } = match kind.build(&cx, cfg) {
            Ok(built) => built,
            Err(e) => {
                tracing::error!(channel = id, "{id}: {e}");
                return;
            }
        };
        self.rt.channels.register(adapter.clone());
        let cancel = self.cancel.child_token();
        let inbound = match &self.rt.home.member {
            Some(member) if kind.leased() => Some(self.tasks.spawn(self.hold_inbound(
                id,
                adapter,
                fence,
                everywhere,
                member.clone(),
                cancel.clone(),
                previous,
            ))),
            _ => {
                self.supervise(adapter, cancel.clone());
                None
            }
        };
        tracing::info!(channel = id, "{id}: started");
        running.insert(
            id,
            Running {
                section,
                cancel,
                inbound,
                handle,
            },
        );
    }

    /// Shared mode: the lease loop of `adapter`'s inbound side. It first waits for the
    /// loop it replaces (`previous`) to stop and release the lease; then, while this
    /// process holds `channel:<id>`, runs the adapter under the supervisor, with its
    /// durable writes fenced by the lease as taken (Telegram's offset). Meanwhile every
    /// process runs the adapter's `everywhere` part (Telegram's webhook calls: the holder
    /// registers the webhook, and a load balancer may send calls to any process), until
    /// `cancel` fires.
    #[allow(clippy::too_many_arguments)]
    fn hold_inbound(
        &self,
        id: &'static str,
        adapter: Arc<dyn Channel>,
        fence: Option<FenceSlot>,
        everywhere: Option<Everywhere>,
        member: Member,
        cancel: CancellationToken,
        previous: Option<JoinHandle<()>>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (store, sink, restarts) = (
            self.rt.store.clone(),
            self.sink.clone(),
            self.restarts.clone(),
        );
        let receive = {
            let (sink, cancel) = (sink.clone(), cancel.clone());
            async move {
                if let Some(everywhere) = everywhere {
                    everywhere(sink, cancel).await;
                }
            }
        };
        async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            let held = hold(
                store,
                channel_lease(id),
                member,
                cancel,
                move |lease, token| {
                    if let Some(slot) = &fence {
                        *slot.lock() = Some(lease);
                    }
                    crate::supervisor::supervise(
                        adapter.clone(),
                        sink.clone(),
                        token,
                        restarts.clone(),
                    )
                },
            );
            tokio::join!(held, receive);
        }
    }

    /// Run `adapter` under the supervisor (restarted with backoff if it stops on its own)
    /// until `cancel` fires; the task is owned by the app's tracker.
    pub fn supervise(&self, adapter: Arc<dyn Channel>, cancel: CancellationToken) {
        self.tasks.spawn(crate::supervisor::supervise(
            adapter,
            self.sink.clone(),
            cancel,
            self.restarts.clone(),
        ));
    }

    /// Channel restarts so far, by channel id (for `/metrics`).
    pub fn restarts(&self) -> Vec<(String, u64)> {
        self.restarts.snapshot()
    }

    /// The running adapter of channel `id` as its own type `T` (Telegram's webhook route
    /// asks for the `Telegram` adapter).
    pub fn handle<T: Any + Send + Sync>(&self, id: &str) -> Option<Arc<T>> {
        let handle = self.running.lock().get(id)?.handle.clone();
        handle.downcast::<T>().ok()
    }
}
