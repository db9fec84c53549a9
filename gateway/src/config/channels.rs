//! Schema of `channels.*` beyond the web chat: Telegram (and the shared access settings).

use serde::{Deserialize, Serialize};

/// Who may talk to the bot in direct messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DmPolicy {
    /// Only senders in `allowFrom`.
    Allowlist,
    /// Unknown senders get a one-time code; `switchboard pairing approve <channel> <code>` lets them in.
    #[default]
    Pairing,
    /// Anyone.
    Open,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct GroupsConfig {
    /// In groups, answer only when @mentioned, replied to, or sent a /command.
    pub require_mention: bool,
}

impl Default for GroupsConfig {
    fn default() -> Self {
        GroupsConfig {
            require_mention: true,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TelegramMode {
    #[default]
    Polling,
    Webhook,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct TelegramConfig {
    pub enabled: bool,
    /// Bot token from @BotFather; env fallback `TELEGRAM_BOT_TOKEN`.
    pub bot_token: Option<String>,
    /// Bot API base URL (a self-hosted Bot API server, or a fake in tests).
    pub api_url: String,
    /// User ids or @usernames allowed to talk to the bot (DMs and groups).
    pub allow_from: Vec<String>,
    pub dm_policy: DmPolicy,
    pub groups: GroupsConfig,
    /// Longest message sent, in characters (at most 4096, Telegram's limit).
    pub text_chunk_limit: usize,
    pub mode: TelegramMode,
    /// Public HTTPS URL Telegram posts updates to (webhook mode); it must reach this
    /// gateway's `POST /telegram/webhook`.
    pub webhook_url: Option<String>,
    /// Secret Telegram sends in `X-Telegram-Bot-Api-Secret-Token` (webhook mode).
    pub webhook_secret: Option<String>,
    /// Long-poll timeout of one getUpdates call, in seconds (1..=50).
    pub poll_timeout_seconds: u64,
}

impl Default for TelegramConfig {
    fn default() -> Self {
        TelegramConfig {
            enabled: false,
            bot_token: None,
            api_url: "https://api.telegram.org".into(),
            allow_from: Vec::new(),
            dm_policy: DmPolicy::Pairing,
            groups: GroupsConfig::default(),
            text_chunk_limit: 4096,
            mode: TelegramMode::Polling,
            webhook_url: None,
            webhook_secret: None,
            poll_timeout_seconds: 30,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DiscordGuildConfig {
    /// Channel (or thread) ids the bot listens in; empty = every channel of the guild.
    pub channels: Vec<String>,
    /// Answer only when @mentioned, replied to, or sent a /command.
    pub require_mention: bool,
}

impl Default for DiscordGuildConfig {
    fn default() -> Self {
        DiscordGuildConfig {
            channels: Vec::new(),
            require_mention: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DiscordConfig {
    pub enabled: bool,
    /// Bot token; env fallback `DISCORD_BOT_TOKEN`.
    pub token: Option<String>,
    /// Base URL replacing https://discord.com (a fake in tests). The gateway WebSocket
    /// URL is whatever `GET /api/v10/gateway` there answers.
    pub api_url: String,
    /// User ids allowed to talk to the bot (DMs and guilds).
    pub allow_from: Vec<String>,
    pub dm_policy: DmPolicy,
    /// Guilds the bot serves, by guild id; empty = every guild it is in.
    pub guilds: std::collections::BTreeMap<String, DiscordGuildConfig>,
    /// Longest message sent, in characters (at most 2000, Discord's limit).
    pub text_chunk_limit: usize,
}

impl Default for DiscordConfig {
    fn default() -> Self {
        DiscordConfig {
            enabled: false,
            token: None,
            api_url: "https://discord.com".into(),
            allow_from: Vec::new(),
            dm_policy: DmPolicy::Pairing,
            guilds: std::collections::BTreeMap::new(),
            text_chunk_limit: 2000,
        }
    }
}
