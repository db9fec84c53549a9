//! The values tests script the fake Discord with (users, failures) and the records it keeps of
//! what the client did (calls, sent messages, interaction answers, commands).

use std::time::Instant;

use serde_json::Value;

/// The bot's user id (`GET /users/@me`, READY's `user`, author of everything the bot sends).
pub const BOT_ID: u64 = 2000;
/// The bot's username.
pub const BOT_USERNAME: &str = "switchboard";
/// The application id (READY's `application.id`, `/oauth2/applications/@me`, interactions).
pub const APPLICATION_ID: u64 = 3000;
/// The longest message content Discord accepts, in characters.
pub const MAX_CONTENT_CHARS: usize = 2000;
/// Default heartbeat interval sent in HELLO (Discord's is ~41 s; short so tests are fast).
pub const DEFAULT_HEARTBEAT_MS: u64 = 1000;

/// Gateway intents the fake looks at (the rest are recorded, not enforced).
pub mod intents {
    pub const GUILDS: u64 = 1 << 0;
    pub const GUILD_MESSAGES: u64 = 1 << 9;
    pub const DIRECT_MESSAGES: u64 = 1 << 12;
    pub const MESSAGE_CONTENT: u64 = 1 << 15;
}

/// A Discord user who writes to the bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DUser {
    pub id: u64,
    pub username: String,
}

impl DUser {
    pub fn new(id: u64, username: &str) -> DUser {
        DUser {
            id,
            username: username.to_owned(),
        }
    }

    /// The fake's own bot user.
    pub fn bot() -> DUser {
        DUser::new(BOT_ID, BOT_USERNAME)
    }
}

/// A scripted failure, consumed by the next call of its route (FIFO per route).
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// 429 `{"message":"You are being rate limited.","retry_after":X,"global":G}` with
    /// `Retry-After`, `X-RateLimit-Remaining: 0`, `X-RateLimit-Reset-After: X`, … headers
    /// (`X-RateLimit-Global: true` and `X-RateLimit-Scope: global` when `global`).
    RateLimited { retry_after_secs: f64, global: bool },
    /// This status with `{"message":"<status>: <reason>","code":0}`.
    ServerError(u16),
    /// Never answer (until the fake shuts down, then 503).
    Hang,
}

/// A message the bot created with `POST /channels/{id}/messages`.
#[derive(Debug, Clone, PartialEq)]
pub struct SentMessage {
    pub channel_id: u64,
    pub content: String,
    pub message_id: u64,
    /// `message_reference.message_id`: the message replied to.
    pub reply_to: Option<u64>,
    /// `allowed_mentions` as sent.
    pub allowed_mentions: Option<Value>,
    /// `components` as sent (action rows of buttons).
    pub components: Option<Value>,
    /// `flags` as sent (0 when absent); `SUPPRESS_EMBEDS` is `1 << 2`.
    pub flags: u64,
    /// Files uploaded with it.
    pub attachments: Vec<super::files::SentAttachment>,
    pub at: Instant,
}

/// The message flag that turns off the embeds of a message's links.
pub const SUPPRESS_EMBEDS: u64 = 1 << 2;

impl SentMessage {
    /// Whether it was created with `SUPPRESS_EMBEDS` (no link embeds).
    pub fn embeds_suppressed(&self) -> bool {
        self.flags & SUPPRESS_EMBEDS != 0
    }
}

impl SentMessage {
    /// `(label, custom_id)` of every button in its components.
    pub fn buttons(&self) -> Vec<(String, String)> {
        buttons(self.components.as_ref())
    }
}

/// `(label, custom_id)` of every button in `components` (action rows).
pub(super) fn buttons(components: Option<&Value>) -> Vec<(String, String)> {
    components
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|row| row["components"].as_array())
        .flatten()
        .filter(|c| c["type"] == 2)
        .map(|b| {
            (
                b["label"].as_str().unwrap_or_default().to_owned(),
                b["custom_id"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A `POST /interactions/{id}/{token}/callback` the fake accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionResponse {
    pub interaction_id: u64,
    /// The callback `type`: 4 (message), 5 (deferred message), 6/7 (components), 9 (modal).
    pub kind: u64,
    /// `data.content`, when given.
    pub content: Option<String>,
    /// `data.flags` has EPHEMERAL (64).
    pub ephemeral: bool,
    /// `data.components`, when given (type 7 replaces the message's components with them).
    pub components: Option<Value>,
    pub at: Instant,
}

/// How a [`Followup`] reached the interaction's webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowupKind {
    /// `POST /webhooks/{app}/{token}`: a new follow-up message.
    Create,
    /// `PATCH /webhooks/{app}/{token}/messages/@original`: the (deferred) original edited.
    EditOriginal,
}

/// A follow-up message or an edit of the original answer of an interaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Followup {
    pub interaction_id: u64,
    pub kind: FollowupKind,
    pub content: Option<String>,
    pub message_id: u64,
    pub at: Instant,
}

/// An application command the client registered.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredCommand {
    pub id: u64,
    /// `None` for a global command.
    pub guild_id: Option<u64>,
    pub name: String,
    pub description: String,
    /// `options` as sent (each has `name`, `type`, `description`, …).
    pub options: Vec<Value>,
}

impl RegisteredCommand {
    /// The names of the top-level options.
    pub fn option_names(&self) -> Vec<String> {
        self.options
            .iter()
            .filter_map(|option| option["name"].as_str().map(str::to_owned))
            .collect()
    }
}

/// One REST call the fake received.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The route's name (`createMessage`, `createInteractionResponse`, …; `unknown` when no
    /// route matched).
    pub route: String,
    pub method: String,
    /// The path and query as requested.
    pub path: String,
    /// The JSON body (`Null` when empty; a string when it was not JSON).
    pub body: Value,
    pub at: Instant,
    /// The HTTP status answered; 0 while unanswered or when no answer was sent.
    pub status: u16,
}
