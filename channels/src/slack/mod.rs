//! Slack adapter: Socket Mode for what comes in (a WebSocket opened from
//! `apps.connections.open`, so no public URL is needed; every envelope acknowledged) and
//! the Web API for what goes out (`chat.postMessage`, `chat.update`, `chat.postEphemeral`,
//! the external file upload), on reqwest and tokio-tungstenite, rustls only.
//!
//! One concern per file: `web` (the Web API client: 429 + `Retry-After`, backoff), `socket`
//! (the connection loop: reconnect after `disconnect` and on loss), `envelope` (handing an
//! envelope to the gateway and acking it), `dedup` (an envelope Slack delivers twice is
//! handled once), `convert` (envelope → [`crate::InboundMessage`], pure), `mrkdwn`
//! (Markdown → Slack mrkdwn), `send`, `actions` (Block Kit buttons, presses), `lines`
//! (`post_line`/`edit_line`), `files` (upload), `received` (files people send: read from
//! the event, fetched with the bot token).

mod actions;
mod config;
mod convert;
#[cfg(test)]
mod convert_tests;
mod dedup;
mod envelope;
mod files;
mod lines;
pub mod mrkdwn;
mod received;
#[cfg(test)]
mod received_tests;
mod send;
mod socket;
mod web;

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::{Channel, ChannelError, DeliveryProgress, InboundSink, Origin, OutboundMessage};

pub use config::{SlackChannelConfig, SlackConfig, APP_TOKEN_ENV, BOT_TOKEN_ENV};
pub use web::ApiError;

pub const CHANNEL_ID: &str = "slack";
/// The longest text we put in one message (Slack truncates `text` past 40,000 characters
/// and advises 4,000).
pub const MAX_TEXT: usize = 4000;
/// The longest text of one section block (a message with buttons carries its text in one).
pub const MAX_SECTION: usize = 3000;
/// Largest file uploaded (Slack's limit is 1 GB).
pub const UPLOAD_LIMIT: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlackSettings {
    /// The bot token (`xoxb-…`): the Web API.
    pub bot_token: String,
    /// The app-level token (`xapp-…`, scope `connections:write`): Socket Mode.
    pub app_token: String,
    /// The Web API base (`https://slack.com/api`; a fake in tests).
    pub api_url: String,
    pub text_limit: usize,
    /// Answer a mention at the top of a channel in a thread under it (its own session).
    pub reply_in_thread: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// Threads the bot has posted in, remembered (boundedly) so a reply in one addresses it.
#[derive(Debug, Default)]
struct Threads {
    set: std::collections::HashSet<String>,
    order: std::collections::VecDeque<String>,
}

/// Most threads remembered.
const MAX_THREADS: usize = 4096;

impl Threads {
    fn key(channel: &str, ts: &str) -> String {
        format!("{channel}:{ts}")
    }

    fn insert(&mut self, channel: &str, ts: &str) {
        let key = Self::key(channel, ts);
        if self.set.insert(key.clone()) {
            self.order.push_back(key);
            if self.order.len() > MAX_THREADS {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }

    fn contains(&self, channel: &str, ts: &str) -> bool {
        self.set.contains(&Self::key(channel, ts))
    }
}

pub(crate) struct Inner {
    settings: SlackSettings,
    web: web::Web,
    /// File downloads (no redirects; `crate::media::download_client`).
    downloads: reqwest::Client,
    /// The bot's user id, from `auth.test`.
    me: OnceLock<String>,
    threads: Mutex<Threads>,
    seen: dedup::Seen,
    tasks: TaskTracker,
}

pub struct Slack {
    inner: Arc<Inner>,
}

impl Slack {
    pub fn new(settings: SlackSettings) -> Result<Slack, SetupError> {
        let web = web::Web::new(&settings.api_url, &settings.bot_token, &settings.app_token)
            .map_err(|e| SetupError::Client(e.to_string()))?;
        let downloads =
            crate::media::download_client().map_err(|e| SetupError::Client(e.to_string()))?;
        Ok(Slack {
            inner: Arc::new(Inner {
                settings,
                web,
                downloads,
                me: OnceLock::new(),
                threads: Mutex::new(Threads::default()),
                seen: dedup::Seen::default(),
                tasks: TaskTracker::new(),
            }),
        })
    }
}

#[async_trait]
impl Channel for Slack {
    fn id(&self) -> &str {
        CHANNEL_ID
    }

    fn text_limit(&self) -> usize {
        self.inner.settings.text_limit.clamp(200, MAX_TEXT)
    }

    async fn run(&self, sink: InboundSink, cancel: CancellationToken) -> Result<(), ChannelError> {
        let result = socket::run(self.inner.clone(), sink, cancel.clone()).await;
        self.inner.tasks.close();
        self.inner.tasks.wait().await;
        self.inner.tasks.reopen();
        result
    }

    async fn send(
        &self,
        msg: &OutboundMessage,
        progress: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        send::send(&self.inner, self.text_limit(), msg, progress).await
    }

    async fn fetch_media(
        &self,
        media: &crate::MediaRef,
        max_bytes: u64,
        out: &mut (dyn tokio::io::AsyncWrite + Unpin + Send),
    ) -> Result<u64, crate::MediaError> {
        received::fetch(&self.inner, media, max_bytes, out).await
    }

    fn file_limit(&self, _kind: crate::FileKind) -> Option<u64> {
        Some(UPLOAD_LIMIT)
    }

    async fn post_line(
        &self,
        origin: &Origin,
        _key: &str,
        text: &str,
    ) -> Result<String, crate::LineError> {
        lines::post(&self.inner, self.text_limit(), origin, text).await
    }

    async fn edit_line(
        &self,
        origin: &Origin,
        message_id: &str,
        text: &str,
    ) -> Result<(), crate::LineError> {
        lines::edit(&self.inner, self.text_limit(), origin, message_id, text).await
    }

    /// Slack has no typing indicator for bots outside its assistant threads: nothing to do.
    async fn typing(&self, _origin: &Origin, _active: bool) -> Result<(), ChannelError> {
        Ok(())
    }
}

/// A Slack conversation id (`C…`, `D…`, `G…`) from an origin, checked.
pub(crate) fn channel_of(origin: &Origin) -> Result<&str, ChannelError> {
    let c = origin.chat_id.as_str();
    if convert::is_slack_id(c) {
        Ok(c)
    } else {
        Err(ChannelError::Permanent(format!(
            "not a Slack conversation id: {c}"
        )))
    }
}
