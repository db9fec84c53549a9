//! Channel adapters beyond the web chat: built from config, registered with the runtime,
//! and restarted one by one when their `channels.<id>` section changes on reload.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use switchboard_channels::telegram::{self, Mode, OffsetStore, Telegram, TelegramSettings};
use switchboard_channels::{Channel, InboundSink};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::{Config, SharedEnv, TelegramConfig, TelegramMode};
use crate::runtime::{lock, Runtime};
use crate::store::Store;

/// The native command menu registered on platforms that have one.
pub const COMMAND_MENU: &[(&str, &str)] = &[
    ("subagents", "Sub-agents: list | stop | log | info | send"),
    ("stop", "Stop the current run and its sub-agents"),
    ("status", "Model, queue and active runs"),
    ("new", "Start a fresh session"),
    ("help", "Show the commands"),
];

struct Running {
    cfg: TelegramConfig,
    adapter: Arc<Telegram>,
    cancel: CancellationToken,
}

pub struct Adapters {
    rt: Arc<Runtime>,
    sink: InboundSink,
    env: SharedEnv,
    tasks: TaskTracker,
    /// Parent of every adapter's token: fired at shutdown.
    cancel: CancellationToken,
    telegram: Mutex<Option<Running>>,
}

impl Adapters {
    pub fn new(
        rt: Arc<Runtime>,
        sink: InboundSink,
        env: SharedEnv,
        tasks: TaskTracker,
        cancel: CancellationToken,
    ) -> Adapters {
        Adapters {
            rt,
            sink,
            env,
            tasks,
            cancel,
            telegram: Mutex::new(None),
        }
    }

    /// Bring the adapters in line with `cfg`: start, stop, or restart what changed.
    pub fn apply(&self, cfg: &Config) {
        let want = &cfg.channels.telegram;
        let mut cur = lock(&self.telegram);
        if cur.as_ref().map(|r| &r.cfg) == Some(want) || (cur.is_none() && !want.enabled) {
            return;
        }
        if let Some(old) = cur.take() {
            tracing::info!("telegram: stopping (config changed)");
            old.cancel.cancel();
            self.rt.unregister_channel(telegram::CHANNEL_ID);
        }
        if !want.enabled {
            return;
        }
        let Some(token) = want
            .bot_token
            .clone()
            .or_else(|| (self.env)("TELEGRAM_BOT_TOKEN"))
            .filter(|t| !t.trim().is_empty())
        else {
            tracing::error!("telegram: enabled but no token: set channels.telegram.botToken or TELEGRAM_BOT_TOKEN");
            return;
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
            commands: COMMAND_MENU
                .iter()
                .map(|(c, d)| (c.to_string(), d.to_string()))
                .collect(),
        };
        let offsets = Arc::new(StoreOffsets {
            store: self.rt.store.clone(),
        });
        let adapter = match Telegram::new(settings, offsets) {
            Ok(a) => Arc::new(a),
            Err(e) => {
                tracing::error!(error = %e, "telegram: cannot start");
                return;
            }
        };
        self.rt.register_channel(adapter.clone());
        let cancel = self.cancel.child_token();
        let (run, sink, token) = (adapter.clone(), self.sink.clone(), cancel.clone());
        self.tasks.spawn(async move {
            if let Err(e) = run.run(sink, token).await {
                tracing::error!(error = %e, "telegram: channel stopped with an error");
            }
        });
        tracing::info!(mode = ?want.mode, "telegram: started");
        *cur = Some(Running {
            cfg: want.clone(),
            adapter,
            cancel,
        });
    }

    /// The running Telegram adapter (for its webhook route).
    pub fn telegram(&self) -> Option<Arc<Telegram>> {
        lock(&self.telegram).as_ref().map(|r| r.adapter.clone())
    }
}

/// Telegram's update offset, kept in `channel_state`.
struct StoreOffsets {
    store: Store,
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
        if let Err(e) = self
            .store
            .set_channel_state(telegram::CHANNEL_ID, OFFSET_KEY, &next_offset.to_string())
            .await
        {
            tracing::error!(error = %e, "telegram: cannot store the offset");
        }
    }
}
