//! Discord adapter (serenity): the gateway through serenity's client (which heartbeats,
//! reconnects and RESUMEs), application commands answered through the interaction
//! callback, and our own REST sender that honours 429 `retry_after` and the
//! `X-RateLimit-*` headers (serenity's ratelimiter ignores a proxy base URL, so it is off).

mod config;
mod convert;
mod handler;
mod interaction;
mod media;
mod press;
mod rest;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use serenity::all::{ChannelId, GatewayIntents, Http, HttpBuilder};
use tokio_util::sync::CancellationToken;
use tokio_util::task::{AbortOnDropHandle, TaskTracker};

use crate::{
    Channel, ChannelError, DeliveryProgress, InboundSink, MenuCommand, Origin, OutboundMessage,
};

pub use config::{DiscordConfig, DiscordGuildConfig, TOKEN_ENV};

pub const CHANNEL_ID: &str = "discord";
/// Discord's limit on one message.
pub const MAX_TEXT: usize = 2000;
/// Discord shows "typing" for ~10 s; refresh a little sooner.
const TYPING_EVERY: Duration = Duration::from_secs(8);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscordSettings {
    pub token: String,
    /// Base URL replacing `https://discord.com` (a fake in tests).
    pub api_url: String,
    pub text_limit: usize,
    /// Application commands registered at start, with their options and choices.
    pub commands: Vec<MenuCommand>,
    /// Let Discord show embeds of links in what the bot sends (off: an embed fetches a
    /// link the model wrote, with no click).
    pub link_preview: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// The bot's identity from READY.
#[derive(Debug, Clone, Copy)]
struct BotInfo {
    user_id: u64,
}

pub(crate) struct Inner {
    settings: DiscordSettings,
    http: Arc<Http>,
    rest: rest::Rest,
    /// Attachment downloads (no redirects; `crate::media::download_client`).
    downloads: reqwest::Client,
    me: OnceLock<BotInfo>,
    typing: Mutex<HashMap<u64, AbortOnDropHandle<()>>>,
    interactions: interaction::Pending,
    tasks: TaskTracker,
}

pub struct Discord {
    inner: Arc<Inner>,
}

impl Discord {
    pub fn new(settings: DiscordSettings) -> Result<Discord, SetupError> {
        let base = settings.api_url.trim_end_matches('/').to_string();
        let http = HttpBuilder::new(&settings.token)
            .proxy(base.clone())
            .ratelimiter_disabled(true)
            .build();
        let rest = rest::Rest::new(&base, &settings.token, !settings.link_preview)
            .map_err(|e| SetupError::Client(e.to_string()))?;
        let downloads =
            crate::media::download_client().map_err(|e| SetupError::Client(e.to_string()))?;
        Ok(Discord {
            inner: Arc::new(Inner {
                settings,
                http: Arc::new(http),
                rest,
                downloads,
                me: OnceLock::new(),
                typing: Mutex::new(HashMap::new()),
                interactions: interaction::Pending::default(),
                tasks: TaskTracker::new(),
            }),
        })
    }

    /// `GET /api/v10/gateway` ourselves first: serenity silently falls back to the real
    /// Discord when that call fails, and a gateway pointed elsewhere must fail loudly.
    async fn check_gateway(&self, cancel: &CancellationToken) -> bool {
        let mut failures = 0;
        loop {
            let e = match self.inner.http.get_gateway().await {
                Ok(g) => {
                    tracing::info!(url = %g.url, "discord: gateway found");
                    return true;
                }
                Err(e) => e,
            };
            failures += 1;
            let delay = crate::backoff::CONNECT.delay(failures);
            tracing::error!(
                error = %e,
                api_url = %self.inner.settings.api_url,
                retry_in = ?delay,
                "discord: GET /api/v10/gateway failed; not connecting (check channels.discord.apiUrl and token)"
            );
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = cancel.cancelled() => return false,
            }
        }
    }
}

#[async_trait]
impl Channel for Discord {
    fn id(&self) -> &str {
        CHANNEL_ID
    }

    fn text_limit(&self) -> usize {
        self.inner.settings.text_limit.clamp(200, MAX_TEXT)
    }

    async fn run(&self, sink: InboundSink, cancel: CancellationToken) -> Result<(), ChannelError> {
        if !self.check_gateway(&cancel).await {
            return Ok(());
        }
        let intents = GatewayIntents::GUILD_MESSAGES
            | GatewayIntents::DIRECT_MESSAGES
            | GatewayIntents::MESSAGE_CONTENT
            | GatewayIntents::GUILDS;
        let handler = handler::Handler {
            inner: self.inner.clone(),
            sink,
        };
        // A second Http for the client (serenity takes it by value); same settings.
        let http = HttpBuilder::new(&self.inner.settings.token)
            .proxy(
                self.inner
                    .settings
                    .api_url
                    .trim_end_matches('/')
                    .to_string(),
            )
            .ratelimiter_disabled(true)
            .build();
        let mut client = serenity::client::ClientBuilder::new_with_http(http, intents)
            .event_handler(handler)
            .await
            .map_err(|e| ChannelError::Permanent(format!("discord client: {e}")))?;
        let shards = client.shard_manager.clone();
        let result = tokio::select! {
            r = client.start() => r.map_err(|e| ChannelError::Temporary(format!("discord gateway: {e}"))),
            _ = cancel.cancelled() => {
                shards.shutdown_all().await;
                Ok(())
            }
        };
        self.inner.typing.lock().clear();
        self.inner.tasks.close();
        result
    }

    async fn send(
        &self,
        msg: &OutboundMessage,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        if let Some(handle) = msg
            .origin
            .reply_handle
            .as_ref()
            .filter(|_| progress.delivered() == 0)
        {
            // The interaction's own task sends the answer (and its follow-up parts).
            if self.inner.interactions.answer(handle, msg) {
                return Ok(());
            }
            // The interaction is gone (e.g. after a restart): answer in the channel instead.
        }
        if let Some(file) = &msg.file {
            return self.send_with_file(msg, file, progress).await;
        }
        let channel = channel_of(&msg.origin)?;
        let chunks =
            crate::split::split_code_aware(&msg.text, msg.footer.as_deref(), self.text_limit());
        let buttons = press::components(&msg.actions);
        crate::send_parts(&chunks, progress, |chunk, last| {
            let components = buttons.as_ref().filter(|_| last);
            let sent = self.inner.rest.create_message(channel, chunk, components);
            async move { sent.await.map(|_| ()) }
        })
        .await
    }

    async fn fetch_media(
        &self,
        media: &crate::MediaRef,
        max_bytes: u64,
        out: &mut (dyn tokio::io::AsyncWrite + Unpin + Send),
    ) -> Result<u64, crate::MediaError> {
        self.fetch(media, max_bytes, out).await
    }

    fn file_limit(&self, _kind: crate::FileKind) -> Option<u64> {
        Some(media::UPLOAD_LIMIT)
    }

    async fn post_line(
        &self,
        origin: &Origin,
        _key: &str,
        text: &str,
    ) -> Result<String, crate::LineError> {
        let channel = channel_of(origin)?;
        let text = crate::split::split_code_aware(text, None, self.text_limit())
            .into_iter()
            .next()
            .unwrap_or_default();
        let id = self.inner.rest.create_message(channel, &text, None).await?;
        if id.is_empty() {
            return Err(
                ChannelError::Permanent("Discord answered a message without an id".into()).into(),
            );
        }
        Ok(id)
    }

    async fn edit_line(
        &self,
        origin: &Origin,
        message_id: &str,
        text: &str,
    ) -> Result<(), crate::LineError> {
        let channel = channel_of(origin)?;
        let id = message_id.parse::<u64>().map_err(|_| {
            crate::LineError::Gone(format!("not a Discord message id: {message_id}"))
        })?;
        let text = crate::split::split_code_aware(text, None, self.text_limit())
            .into_iter()
            .next()
            .unwrap_or_default();
        self.inner.rest.edit_message(channel, id, &text).await
    }

    async fn typing(&self, origin: &Origin, active: bool) -> Result<(), ChannelError> {
        let channel = channel_of(origin)?;
        let mut map = self.inner.typing.lock();
        if !active {
            map.remove(&channel);
            return Ok(());
        }
        let http = self.inner.http.clone();
        let task = tokio::spawn(async move {
            loop {
                if let Err(e) = ChannelId::new(channel).broadcast_typing(&http).await {
                    tracing::debug!(error = %e, "discord: typing failed");
                }
                tokio::time::sleep(TYPING_EVERY).await;
            }
        });
        map.insert(channel, AbortOnDropHandle::new(task));
        Ok(())
    }
}

pub(super) fn channel_of(origin: &Origin) -> Result<u64, ChannelError> {
    origin
        .chat_id
        .parse::<u64>()
        .ok()
        .filter(|c| *c != 0)
        .ok_or_else(|| {
            ChannelError::Permanent(format!("not a Discord channel id: {}", origin.chat_id))
        })
}
