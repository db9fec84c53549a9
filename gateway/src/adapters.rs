//! Channel adapters beyond the web chat: built from config, registered with the runtime,
//! run under the supervisor (`supervisor.rs`), and restarted one by one when their
//! `channels.<id>` section changes on reload. In shared mode (`rt.member`) every process
//! registers each adapter for sending, and its inbound side (Telegram's poller or webhook
//! registration, Discord's gateway session) runs only while this process holds the
//! channel's lease, `channel:<id>` (`cluster::hold`).

mod offsets;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use switchboard_channels::discord::{self, Discord, DiscordSettings};
use switchboard_channels::slack::{self, Slack, SlackSettings};
use switchboard_channels::telegram::{self, Mode, Telegram, TelegramSettings};
use switchboard_channels::{Channel, InboundSink};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::cluster::hold::{channel_lease, hold};
use crate::cluster::Member;
use crate::config::{Config, DiscordConfig, SharedEnv, TelegramConfig, TelegramMode};
use crate::runtime::Runtime;
use crate::store::Lease;

use offsets::{FenceSlot, StoreOffsets};

/// A running adapter and the config section it was built from.
struct Running {
    section: serde_json::Value,
    cancel: CancellationToken,
    /// Shared mode: the lease loop of its inbound side (a replacement waits for it to
    /// release the lease before taking it).
    inbound: Option<JoinHandle<()>>,
}

/// A built adapter and, for Telegram on PostgreSQL, the lease its offset writes are
/// fenced by.
type Built = (Arc<dyn Channel>, Option<FenceSlot>);

pub struct Adapters {
    rt: Arc<Runtime>,
    sink: InboundSink,
    env: SharedEnv,
    tasks: TaskTracker,
    /// Parent of every adapter's token: fired at shutdown.
    cancel: CancellationToken,
    running: Mutex<HashMap<&'static str, Running>>,
    /// The Telegram adapter, for its webhook route.
    telegram: Mutex<Option<Arc<Telegram>>>,
    restarts: Arc<crate::supervisor::Restarts>,
    /// The `gateway` lease this process holds (PostgreSQL, standby mode): Telegram's offset
    /// is written under its fence. `None` on SQLite and in shared mode, where the channel's
    /// own lease fences it.
    fence: Option<Lease>,
}

impl Adapters {
    pub fn new(
        rt: Arc<Runtime>,
        sink: InboundSink,
        env: SharedEnv,
        tasks: TaskTracker,
        cancel: CancellationToken,
        fence: Option<Lease>,
    ) -> Adapters {
        Adapters {
            fence,
            rt,
            sink,
            env,
            tasks,
            cancel,
            running: Mutex::new(HashMap::new()),
            telegram: Mutex::new(None),
            restarts: Arc::default(),
        }
    }

    /// Bring the adapters in line with `cfg`: start, stop, or restart what changed.
    pub fn apply(&self, cfg: &Config) {
        let tg = &cfg.channels.telegram;
        self.apply_one(telegram::CHANNEL_ID, section(tg), tg.enabled, || {
            self.build_telegram(tg)
        });
        let dc = &cfg.channels.discord;
        self.apply_one(discord::CHANNEL_ID, section(dc), dc.enabled, || {
            self.build_discord(dc)
        });
        let sl = &cfg.channels.slack;
        self.apply_one(slack::CHANNEL_ID, section(sl), sl.enabled, || {
            self.build_slack(sl)
        });
    }

    fn apply_one(
        &self,
        id: &'static str,
        section: serde_json::Value,
        enabled: bool,
        build: impl FnOnce() -> Option<Built>,
    ) {
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
            self.rt.unregister_channel(id);
            if id == telegram::CHANNEL_ID {
                *self.telegram.lock() = None;
            }
        }
        if !enabled {
            return;
        }
        let Some((adapter, fence)) = build() else {
            return;
        };
        self.rt.register_channel(adapter.clone());
        let cancel = self.cancel.child_token();
        let inbound = match &self.rt.member {
            None => {
                self.supervise(adapter, cancel.clone());
                None
            }
            Some(member) => Some(self.tasks.spawn(self.hold_inbound(
                id,
                adapter,
                fence,
                member.clone(),
                cancel.clone(),
                previous,
            ))),
        };
        tracing::info!(channel = id, "{id}: started");
        running.insert(
            id,
            Running {
                section,
                cancel,
                inbound,
            },
        );
    }

    /// Shared mode: the lease loop of `adapter`'s inbound side. It first waits for the
    /// loop it replaces (`previous`) to stop and release the lease; then, while this
    /// process holds `channel:<id>`, runs the adapter under the supervisor, with
    /// Telegram's offset fenced by the lease as taken. Telegram in webhook mode: the holder
    /// registers the webhook, and every process takes webhook calls (a load balancer may
    /// send them to any), until `cancel` fires.
    fn hold_inbound(
        &self,
        id: &'static str,
        adapter: Arc<dyn Channel>,
        fence: Option<FenceSlot>,
        member: Member,
        cancel: CancellationToken,
        previous: Option<JoinHandle<()>>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (store, sink, restarts) = (
            self.rt.store.clone(),
            self.sink.clone(),
            self.restarts.clone(),
        );
        let webhook = self
            .telegram()
            .filter(|t| id == telegram::CHANNEL_ID && t.is_webhook());
        let receive = {
            let (sink, cancel) = (sink.clone(), cancel.clone());
            async move {
                if let Some(telegram) = webhook {
                    telegram.receive_webhooks(sink, cancel).await;
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

    fn token(&self, configured: &Option<String>, env: &str) -> Option<String> {
        configured
            .clone()
            .or_else(|| (self.env)(env))
            .filter(|t| !t.trim().is_empty())
    }

    fn build_telegram(&self, want: &TelegramConfig) -> Option<Built> {
        let Some(token) = self.token(&want.bot_token, "TELEGRAM_BOT_TOKEN") else {
            tracing::error!("telegram: enabled but no token: set channels.telegram.botToken or TELEGRAM_BOT_TOKEN");
            return None;
        };
        let mode = match want.mode {
            TelegramMode::Polling => Mode::Polling,
            TelegramMode::Webhook => Mode::Webhook {
                url: want.webhook_url.clone().unwrap_or_default(),
                secret: want.webhook_secret.clone().unwrap_or_default(),
            },
        };
        let settings = TelegramSettings {
            token,
            api_url: want.api_url.clone(),
            text_limit: want.text_chunk_limit,
            poll_timeout: Duration::from_secs(want.poll_timeout_seconds),
            mode,
            commands: crate::commands::menu::menu(),
            link_preview: want.link_preview,
        };
        // Standby mode: the held `gateway` lease; shared mode: the channel's lease, set by
        // the lease loop at each takeover; SQLite: none.
        let fence = if self.rt.member.is_some() {
            Some(FenceSlot::default())
        } else {
            self.fence.clone().map(|l| Arc::new(Mutex::new(Some(l))))
        };
        let offsets = Arc::new(StoreOffsets {
            store: self.rt.store.clone(),
            fence: fence.clone(),
        });
        match Telegram::new(settings, offsets) {
            Ok(a) => {
                let a = Arc::new(a);
                *self.telegram.lock() = Some(a.clone());
                Some((a, fence))
            }
            Err(e) => {
                tracing::error!(error = %e, "telegram: cannot start");
                None
            }
        }
    }

    fn build_discord(&self, want: &DiscordConfig) -> Option<Built> {
        let Some(token) = self.token(&want.token, "DISCORD_BOT_TOKEN") else {
            tracing::error!(
                "discord: enabled but no token: set channels.discord.token or DISCORD_BOT_TOKEN"
            );
            return None;
        };
        let settings = DiscordSettings {
            token,
            api_url: want.api_url.clone(),
            text_limit: want.text_chunk_limit,
            commands: crate::commands::menu::menu(),
            link_preview: want.link_preview,
        };
        match Discord::new(settings) {
            Ok(a) => Some((Arc::new(a), None)),
            Err(e) => {
                tracing::error!(error = %e, "discord: cannot start");
                None
            }
        }
    }

    fn build_slack(&self, want: &crate::config::slack::SlackConfig) -> Option<Built> {
        let bot = self.token(&want.bot_token, "SLACK_BOT_TOKEN");
        let app = self.token(&want.app_token, "SLACK_APP_TOKEN");
        let (Some(bot_token), Some(app_token)) = (bot, app) else {
            tracing::error!("slack: enabled but a token is missing: set channels.slack.botToken (or SLACK_BOT_TOKEN) and channels.slack.appToken (or SLACK_APP_TOKEN)");
            return None;
        };
        let settings = SlackSettings {
            bot_token,
            app_token,
            api_url: want.api_url.clone(),
            text_limit: want.text_chunk_limit,
            reply_in_thread: want.reply_in_thread,
        };
        match Slack::new(settings) {
            Ok(a) => Some((Arc::new(a), None)),
            Err(e) => {
                tracing::error!(error = %e, "slack: cannot start");
                None
            }
        }
    }

    /// The running Telegram adapter (for its webhook route).
    pub fn telegram(&self) -> Option<Arc<Telegram>> {
        self.telegram.lock().clone()
    }
}

fn section<T: serde::Serialize>(cfg: &T) -> serde_json::Value {
    serde_json::to_value(cfg).unwrap_or(serde_json::Value::Null)
}
