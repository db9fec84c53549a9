//! Channel adapters beyond the web chat: built from config, registered with the runtime,
//! run under the supervisor (`supervisor.rs`), and restarted one by one when their
//! `channels.<id>` section changes on reload.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use switchboard_channels::discord::{self, Discord, DiscordSettings};
use switchboard_channels::telegram::{
    self, LedgerError, Mode, OffsetStore, Poisoned, Telegram, TelegramSettings,
};
use switchboard_channels::{Channel, InboundSink};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{Config, DiscordConfig, SharedEnv, TelegramConfig, TelegramMode};
use crate::runtime::Runtime;
use crate::store::{now_ms, Lease, PoisonedUpdate, Store};

/// A running adapter and the config section it was built from.
struct Running {
    section: serde_json::Value,
    cancel: CancellationToken,
}

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
    /// The `gateway` lease this process holds (PostgreSQL): Telegram's offset is written
    /// under its fence. `None` on SQLite.
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
    }

    fn apply_one(
        &self,
        id: &'static str,
        section: serde_json::Value,
        enabled: bool,
        build: impl FnOnce() -> Option<Arc<dyn Channel>>,
    ) {
        let mut running = self.running.lock();
        match running.get(id) {
            Some(r) if r.section == section => return,
            None if !enabled => return,
            _ => {}
        }
        if let Some(old) = running.remove(id) {
            tracing::info!(channel = id, "{id}: stopping (config changed)");
            old.cancel.cancel();
            self.rt.unregister_channel(id);
            if id == telegram::CHANNEL_ID {
                *self.telegram.lock() = None;
            }
        }
        if !enabled {
            return;
        }
        let Some(adapter) = build() else { return };
        self.rt.register_channel(adapter.clone());
        let cancel = self.cancel.child_token();
        self.supervise(adapter, cancel.clone());
        tracing::info!(channel = id, "{id}: started");
        running.insert(id, Running { section, cancel });
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

    fn build_telegram(&self, want: &TelegramConfig) -> Option<Arc<dyn Channel>> {
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
        };
        let offsets = Arc::new(StoreOffsets {
            store: self.rt.store.clone(),
            fence: self.fence.clone(),
        });
        match Telegram::new(settings, offsets) {
            Ok(a) => {
                let a = Arc::new(a);
                *self.telegram.lock() = Some(a.clone());
                Some(a)
            }
            Err(e) => {
                tracing::error!(error = %e, "telegram: cannot start");
                None
            }
        }
    }

    fn build_discord(&self, want: &DiscordConfig) -> Option<Arc<dyn Channel>> {
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
        };
        match Discord::new(settings) {
            Ok(a) => Some(Arc::new(a)),
            Err(e) => {
                tracing::error!(error = %e, "discord: cannot start");
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

/// Telegram's update offset (in `channel_state`) and its ledger of update attempts and
/// poisoned updates, in the store.
struct StoreOffsets {
    store: Store,
    /// Set on PostgreSQL: the offset moves only while this lease is still ours.
    fence: Option<Lease>,
}

const OFFSET_KEY: &str = "offset";

#[async_trait]
impl OffsetStore for StoreOffsets {
    async fn load(&self) -> Option<i64> {
        match self
            .store
            .channel_state(telegram::CHANNEL_ID, OFFSET_KEY)
            .await
        {
            Ok(v) => v.and_then(|v| v.parse().ok()),
            Err(e) => {
                tracing::error!(error = %e, "telegram: cannot read the stored offset");
                None
            }
        }
    }

    async fn save(&self, next_offset: i64) {
        let (channel, key) = (telegram::CHANNEL_ID, OFFSET_KEY);
        let saved = match &self.fence {
            None => {
                self.store
                    .save_inbound_offset(channel, key, next_offset)
                    .await
            }
            Some(lease) => match self
                .store
                .save_inbound_offset_fenced(channel, key, next_offset, lease)
                .await
            {
                Ok(true) => Ok(()),
                Ok(false) => {
                    // The keeper notices the loss at its next renewal and stops the process.
                    tracing::error!(
                        next_offset,
                        "telegram: the gateway lease changed hands; the offset stays for the new holder"
                    );
                    Ok(())
                }
                Err(e) => Err(e),
            },
        };
        if let Err(e) = saved {
            tracing::error!(error = %e, "telegram: cannot store the offset");
        }
    }

    async fn begin_attempt(&self, update_id: i64) -> Result<u32, LedgerError> {
        let n = self
            .store
            .begin_inbound_attempt(telegram::CHANNEL_ID, update_id)
            .await
            .map_err(|e| LedgerError(e.to_string()))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    async fn interrupted(&self, update_id: i64) {
        if let Err(e) = self
            .store
            .uncount_inbound_attempt(telegram::CHANNEL_ID, update_id)
            .await
        {
            tracing::warn!(update_id, error = %e, "telegram: cannot take back an interrupted attempt");
        }
    }

    async fn handled(&self, update_id: i64) {
        if let Err(e) = self
            .store
            .forget_inbound_attempts(telegram::CHANNEL_ID, update_id)
            .await
        {
            tracing::warn!(update_id, error = %e, "telegram: cannot clear a handled update's attempts");
        }
    }

    async fn poison(&self, record: &Poisoned) -> Result<(), LedgerError> {
        let row = PoisonedUpdate {
            channel: telegram::CHANNEL_ID.to_string(),
            update_id: record.update_id,
            attempts: i64::from(record.attempts),
            reason: record.reason.clone(),
            summary: record.summary.clone(),
            payload: record.payload.clone(),
            poisoned_at: now_ms(),
        };
        self.store
            .poison_inbound(&row)
            .await
            .map_err(|e| LedgerError(e.to_string()))
    }
}
