//! Telegram adapter (teloxide): long polling with a persisted offset and a stall
//! watchdog, or a webhook on the gateway's own server; DMs, groups and forum topics;
//! HTML output with a plain-text fallback; typing; the native command menu.

mod config;
mod convert;
pub mod format;
pub mod html_split;
mod inbound;
mod line;
mod media;
mod poll;
mod raw;
mod send;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use teloxide::prelude::*;
use teloxide::types::{BotCommand, ChatAction};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::{
    Channel, ChannelError, DeliveryProgress, InboundSink, MenuCommand, Origin, OutboundMessage,
};

pub use config::{TelegramConfig, TelegramMode, TOKEN_ENV};
pub use inbound::{LedgerError, OffsetStore, Poisoned, MAX_ATTEMPTS};

pub const CHANNEL_ID: &str = "telegram";
/// Telegram's own limit on one message.
pub const MAX_TEXT: usize = 4096;
/// How often the typing indicator is refreshed (Telegram shows it for ~5 s).
const TYPING_EVERY: Duration = Duration::from_millis(4500);

/// The adapter's settings, converted from the gateway's config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelegramSettings {
    pub token: String,
    /// Base URL of the Bot API (`https://api.telegram.org`, or a fake in tests).
    pub api_url: String,
    pub text_limit: usize,
    /// Long-poll timeout of one `getUpdates` call.
    pub poll_timeout: Duration,
    pub mode: Mode,
    /// The native command menu (`setMyCommands`: names and descriptions; Telegram's menu
    /// has no options).
    pub commands: Vec<MenuCommand>,
    /// Let Telegram show link previews of what the bot sends (off: a preview fetches a
    /// link the model wrote, with no click).
    pub link_preview: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    Polling,
    Webhook { url: String, secret: String },
}

/// A chat and, in a forum, its topic.
type ChatThread = (i64, Option<i32>);

/// The bot's own identity, learned from `getMe`.
#[derive(Debug, Clone)]
struct BotInfo {
    id: u64,
    username: String,
    /// The command menu: a `/name` of it (or `/name@username`) is a command for this bot.
    commands: Vec<MenuCommand>,
}

pub struct Telegram {
    bot: Bot,
    settings: TelegramSettings,
    offsets: Arc<dyn OffsetStore>,
    me: OnceLock<BotInfo>,
    /// Typing refreshers by (chat, thread); dropping a handle stops its task.
    typing: Mutex<HashMap<ChatThread, AbortOnDropHandle<()>>>,
    /// Set while running in webhook mode: where updates go, and the run's cancel token.
    sink: Mutex<Option<(InboundSink, CancellationToken)>>,
    /// Set while [`Telegram::receive_webhooks`] runs (a process that takes webhook calls
    /// while another registers the webhook): used when `sink` is not set.
    receiver: Mutex<Option<(InboundSink, CancellationToken)>>,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("invalid channels.telegram.apiUrl `{0}`: {1}")]
    ApiUrl(String, String),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// Webhook request problems, answered with an HTTP status by the gateway.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("wrong or missing secret token")]
    Unauthorized,
    #[error("not a Telegram update: {0}")]
    BadUpdate(String),
    #[error("the Telegram channel is not running in webhook mode")]
    NotRunning,
    /// The gateway did not take the update (Telegram should deliver it again).
    #[error("the update was not taken: {0}")]
    NotTaken(String),
}

impl Telegram {
    pub fn new(
        settings: TelegramSettings,
        offsets: Arc<dyn OffsetStore>,
    ) -> Result<Telegram, SetupError> {
        let url = reqwest::Url::parse(&settings.api_url)
            .map_err(|e| SetupError::ApiUrl(settings.api_url.clone(), e.to_string()))?;
        // The client's timeout must outlast a long poll; the watchdog in `poll` is shorter.
        let client = teloxide::net::default_reqwest_settings()
            .timeout(settings.poll_timeout * 2 + Duration::from_secs(15))
            .build()
            .map_err(|e| SetupError::Client(e.to_string()))?;
        let bot = Bot::with_client(settings.token.clone(), client).set_api_url(url);
        Ok(Telegram {
            bot,
            settings,
            offsets,
            me: OnceLock::new(),
            typing: Mutex::new(HashMap::new()),
            sink: Mutex::new(None),
            receiver: Mutex::new(None),
        })
    }

    /// `getMe`, retried with backoff until it works or `cancel` fires.
    async fn identify(&self, cancel: &CancellationToken) -> Option<BotInfo> {
        let mut failures = 0;
        loop {
            match self.bot.get_me().await {
                Ok(me) => {
                    let info = BotInfo {
                        id: me.user.id.0,
                        username: me.user.username.clone().unwrap_or_default(),
                        commands: self.settings.commands.clone(),
                    };
                    tracing::info!(bot = %info.username, "telegram: connected");
                    return Some(info);
                }
                Err(e) => {
                    failures += 1;
                    let delay = crate::backoff::CONNECT.delay(failures);
                    tracing::error!(error = %e, retry_in = ?delay, "telegram: getMe failed (check channels.telegram.botToken and apiUrl)");
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = cancel.cancelled() => return None,
                    }
                }
            }
        }
    }

    async fn register_commands(&self) {
        let commands: Vec<BotCommand> = self
            .settings
            .commands
            .iter()
            .map(|c| BotCommand::new(&c.name, &c.description))
            .collect();
        if let Err(e) = self.bot.set_my_commands(commands).await {
            tracing::warn!(error = %e, "telegram: setMyCommands failed; the command menu may be stale");
        }
    }

    /// A webhook request from the gateway's HTTP server.
    pub async fn handle_webhook(
        &self,
        secret: Option<&str>,
        body: &[u8],
    ) -> Result<(), WebhookError> {
        let Mode::Webhook {
            secret: expected, ..
        } = &self.settings.mode
        else {
            return Err(WebhookError::NotRunning);
        };
        if !secret.is_some_and(|s| crate::secret_eq(s.as_bytes(), expected.as_bytes())) {
            return Err(WebhookError::Unauthorized);
        }
        let mut raw: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| WebhookError::BadUpdate(e.to_string()))?;
        raw::repair_update(&mut raw);
        let update: teloxide::types::Update = serde_json::from_str(&raw.to_string())
            .map_err(|e| WebhookError::BadUpdate(e.to_string()))?;
        let (sink, cancel) = self
            .sink
            .lock()
            .clone()
            .or_else(|| self.receiver.lock().clone())
            .ok_or(WebhookError::NotRunning)?;
        let me = self.me.get().cloned().ok_or(WebhookError::NotRunning)?;
        let id = i64::from(update.id.0);
        // 200 only once the gateway took the update (or it was recorded as poisoned);
        // anything else is an error status, so Telegram delivers it again.
        match self.handle_update(&sink, &me, update, &cancel).await {
            inbound::Outcome::Done => {
                self.offsets.handled(id).await;
                Ok(())
            }
            inbound::Outcome::Poisoned => Ok(()),
            inbound::Outcome::NotTaken(why) => {
                tracing::warn!(update_id = id, reason = %why, "telegram: webhook update not taken; answering 503 so Telegram delivers it again");
                Err(WebhookError::NotTaken(why))
            }
            inbound::Outcome::Interrupted => Err(WebhookError::NotRunning),
        }
    }
}

impl Telegram {
    /// Takes webhook calls (webhook mode) until `cancel` fires, without registering the
    /// webhook or the command menu: for a process that shares the bot with the one that
    /// runs [`Channel::run`] (which registers them), behind one address. Learns the bot's
    /// identity first (`getMe`, retried until it works or `cancel` fires).
    pub async fn receive_webhooks(&self, sink: InboundSink, cancel: CancellationToken) {
        if !matches!(self.settings.mode, Mode::Webhook { .. }) {
            return;
        }
        let Some(me) = self.identify(&cancel).await else {
            return;
        };
        let _ = self.me.set(me);
        *self.receiver.lock() = Some((sink, cancel.clone()));
        cancel.cancelled().await;
        *self.receiver.lock() = None;
    }

    /// Whether updates come through the webhook (else long polling).
    pub fn is_webhook(&self) -> bool {
        matches!(self.settings.mode, Mode::Webhook { .. })
    }
}

fn chat_of(origin: &Origin) -> Result<(ChatId, Option<i32>), ChannelError> {
    let chat = origin.chat_id.parse::<i64>().map_err(|_| {
        ChannelError::Permanent(format!("not a Telegram chat id: {}", origin.chat_id))
    })?;
    let thread = origin
        .thread_id
        .as_deref()
        .and_then(|t| t.parse::<i32>().ok());
    Ok((ChatId(chat), thread))
}

#[async_trait]
impl Channel for Telegram {
    fn id(&self) -> &str {
        CHANNEL_ID
    }

    fn text_limit(&self) -> usize {
        self.settings.text_limit.clamp(64, MAX_TEXT)
    }

    async fn run(&self, sink: InboundSink, cancel: CancellationToken) -> Result<(), ChannelError> {
        let Some(me) = self.identify(&cancel).await else {
            return Ok(());
        };
        let _ = self.me.set(me.clone());
        self.register_commands().await;
        match &self.settings.mode {
            Mode::Polling => {
                if let Err(e) = self.bot.delete_webhook().await {
                    tracing::warn!(error = %e, "telegram: deleteWebhook failed; polling may get 409 Conflict");
                }
                self.poll(&sink, &me, &cancel).await;
            }
            Mode::Webhook { url, secret } => {
                let url = reqwest::Url::parse(url)
                    .map_err(|e| ChannelError::Permanent(format!("invalid webhookUrl: {e}")))?;
                let set = self
                    .bot
                    .set_webhook(url)
                    .secret_token(secret.clone())
                    .allowed_updates(vec![
                        teloxide::types::AllowedUpdate::Message,
                        teloxide::types::AllowedUpdate::CallbackQuery,
                    ]);
                if let Err(e) = set.await {
                    tracing::error!(error = %e, "telegram: setWebhook failed");
                }
                *self.sink.lock() = Some((sink, cancel.clone()));
                cancel.cancelled().await;
                *self.sink.lock() = None;
            }
        }
        self.typing.lock().clear();
        Ok(())
    }

    async fn send(
        &self,
        msg: &OutboundMessage,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        match &msg.file {
            Some(file) => self.send_with_file(msg, file, progress).await,
            None => self.send_chunks(msg, progress).await,
        }
    }

    async fn fetch_media(
        &self,
        media: &crate::MediaRef,
        max_bytes: u64,
        out: &mut (dyn tokio::io::AsyncWrite + Unpin + Send),
    ) -> Result<u64, crate::MediaError> {
        self.fetch(media, max_bytes, out).await
    }

    fn file_limit(&self, kind: crate::FileKind) -> Option<u64> {
        Some(match kind {
            crate::FileKind::Photo => media::PHOTO_LIMIT,
            crate::FileKind::Document => media::DOCUMENT_LIMIT,
        })
    }

    async fn post_line(
        &self,
        origin: &Origin,
        _key: &str,
        text: &str,
    ) -> Result<String, crate::LineError> {
        self.post(origin, text).await
    }

    async fn edit_line(
        &self,
        origin: &Origin,
        message_id: &str,
        text: &str,
    ) -> Result<(), crate::LineError> {
        self.edit(origin, message_id, text).await
    }

    async fn typing(&self, origin: &Origin, active: bool) -> Result<(), ChannelError> {
        let (chat, thread) = chat_of(origin)?;
        let mut map = self.typing.lock();
        if !active {
            map.remove(&(chat.0, thread));
            return Ok(());
        }
        let bot = self.bot.clone();
        let task = tokio::spawn(async move {
            loop {
                let mut req = bot.send_chat_action(chat, ChatAction::Typing);
                if let Some(t) = thread {
                    req = req.message_thread_id(teloxide::types::ThreadId(
                        teloxide::types::MessageId(t),
                    ));
                }
                if let Err(e) = req.await {
                    tracing::debug!(error = %e, "telegram: sendChatAction failed");
                }
                tokio::time::sleep(TYPING_EVERY).await;
            }
        });
        map.insert((chat.0, thread), AbortOnDropHandle::new(task));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
