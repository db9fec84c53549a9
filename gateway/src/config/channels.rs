//! Schema of `channels.*` beyond the web chat: Telegram, Discord, and the access settings
//! they share (DM and group policies, allowlists).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ids;

/// Who may talk to the bot in direct messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DmPolicy {
    /// Only senders in `allowFrom`.
    Allowlist,
    /// Unknown senders get a one-time code; `switchboard pairing approve <channel> <code>` lets them in.
    #[default]
    Pairing,
    /// Anyone.
    Open,
    /// No direct messages at all.
    Disabled,
}

/// Which groups (Telegram groups, Discord guild channels) the bot serves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupPolicy {
    /// Only groups listed under `groups` (Telegram) / `guilds` (Discord); a `"*"` entry
    /// lists every group.
    #[default]
    Allowlist,
    /// Every group the bot is in; listed groups still get their own settings.
    Open,
    /// No group messages at all.
    Disabled,
}

/// One group's settings (Telegram: `groups.<chatId>`, or `groups."*"` for every group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct GroupConfig {
    /// Answer only when @mentioned, replied to, or sent a /command.
    pub require_mention: bool,
    /// Who may address the bot in this group (user ids or @usernames); unset: the
    /// channel's `groupAllowFrom`, else its `allowFrom`, else anyone in the group.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub allow_from: Option<Vec<String>>,
}

impl Default for GroupConfig {
    fn default() -> Self {
        GroupConfig {
            require_mention: true,
            allow_from: None,
        }
    }
}

/// The key of a group entry that applies to every group not listed by id.
pub const ANY_GROUP: &str = "*";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TelegramMode {
    #[default]
    Polling,
    Webhook,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct TelegramConfig {
    pub enabled: bool,
    /// Bot token from @BotFather; env fallback `TELEGRAM_BOT_TOKEN`.
    pub bot_token: Option<String>,
    /// Bot API base URL (a self-hosted Bot API server, or a fake in tests).
    pub api_url: String,
    /// User ids (numbers or strings) or @usernames allowed to talk to the bot in DMs, and
    /// in groups unless `groupAllowFrom` or the group's own `allowFrom` says otherwise.
    /// `"*"` = anyone.
    #[serde(deserialize_with = "ids::list")]
    #[schemars(with = "Vec<ids::IdSchema>")]
    pub allow_from: Vec<String>,
    pub dm_policy: DmPolicy,
    pub group_policy: GroupPolicy,
    /// Who may address the bot in groups, unless a group has its own `allowFrom`.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub group_allow_from: Option<Vec<String>>,
    /// Groups by chat id (e.g. `"-1001234567890"`), or `"*"` for every group.
    pub groups: std::collections::BTreeMap<String, GroupConfig>,
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
    /// Who may answer approval requests (user ids or @usernames), in a DM or a group;
    /// unset: the `allowFrom` entries (but `"*"`: an owner is named). `"*"` = anyone.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub owners: Option<Vec<String>>,
    /// Let the platform show link previews (Telegram) and embeds (Discord) of what the bot
    /// sends. Off by default: a preview fetches a link the model wrote, with no click.
    pub link_preview: bool,
}

impl Default for TelegramConfig {
    fn default() -> Self {
        TelegramConfig {
            enabled: false,
            bot_token: None,
            api_url: "https://api.telegram.org".into(),
            allow_from: Vec::new(),
            dm_policy: DmPolicy::Pairing,
            group_policy: GroupPolicy::Allowlist,
            group_allow_from: None,
            groups: std::collections::BTreeMap::new(),
            text_chunk_limit: 4096,
            mode: TelegramMode::Polling,
            webhook_url: None,
            webhook_secret: None,
            poll_timeout_seconds: 30,
            owners: None,
            link_preview: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DiscordGuildConfig {
    /// Channel (or thread) ids the bot listens in; empty = every channel of the guild.
    #[serde(deserialize_with = "ids::list")]
    #[schemars(with = "Vec<ids::IdSchema>")]
    pub channels: Vec<String>,
    /// Answer only when @mentioned, replied to, or sent a /command.
    pub require_mention: bool,
    /// Who may address the bot in this guild; unset: the channel's `groupAllowFrom`, else
    /// its `allowFrom`, else anyone in the guild.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub allow_from: Option<Vec<String>>,
}

impl Default for DiscordGuildConfig {
    fn default() -> Self {
        DiscordGuildConfig {
            channels: Vec::new(),
            require_mention: true,
            allow_from: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DiscordConfig {
    pub enabled: bool,
    /// Bot token; env fallback `DISCORD_BOT_TOKEN`.
    pub token: Option<String>,
    /// Base URL replacing https://discord.com (a fake in tests). The gateway WebSocket
    /// URL is whatever `GET /api/v10/gateway` there answers.
    pub api_url: String,
    /// User ids (numbers or strings) or @usernames allowed to talk to the bot in DMs, and
    /// in guilds unless `groupAllowFrom` or the guild's own `allowFrom` says otherwise.
    /// `"*"` = anyone.
    #[serde(deserialize_with = "ids::list")]
    #[schemars(with = "Vec<ids::IdSchema>")]
    pub allow_from: Vec<String>,
    pub dm_policy: DmPolicy,
    pub group_policy: GroupPolicy,
    /// Who may address the bot in guilds, unless a guild has its own `allowFrom`.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub group_allow_from: Option<Vec<String>>,
    /// Guilds the bot serves, by guild id, or `"*"` for every guild.
    pub guilds: std::collections::BTreeMap<String, DiscordGuildConfig>,
    /// Longest message sent, in characters (at most 2000, Discord's limit).
    pub text_chunk_limit: usize,
    /// Who may answer approval requests (user ids or @usernames), in a DM or a group;
    /// unset: the `allowFrom` entries (but `"*"`: an owner is named). `"*"` = anyone.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub owners: Option<Vec<String>>,
    /// Let the platform show link previews (Telegram) and embeds (Discord) of what the bot
    /// sends. Off by default: a preview fetches a link the model wrote, with no click.
    pub link_preview: bool,
}

impl Default for DiscordConfig {
    fn default() -> Self {
        DiscordConfig {
            enabled: false,
            token: None,
            api_url: "https://discord.com".into(),
            allow_from: Vec::new(),
            dm_policy: DmPolicy::Pairing,
            group_policy: GroupPolicy::Allowlist,
            group_allow_from: None,
            guilds: std::collections::BTreeMap::new(),
            text_chunk_limit: 2000,
            owners: None,
            link_preview: false,
        }
    }
}

/// What the access check needs from a channel's config for one chat: the same questions
/// for every channel that has allowlists. The web chat and the HTTP API have none (they
/// are local, and token-guarded when exposed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessRules<'a> {
    /// The config section, for log lines (`channels.telegram`).
    pub section: &'static str,
    pub allow_from: &'a [String],
    pub dm_policy: DmPolicy,
    pub group_policy: GroupPolicy,
    pub group_allow_from: Option<&'a [String]>,
    /// For a group chat: its entry (by id, else `"*"`), if listed.
    pub group: Option<GroupRule<'a>>,
}

/// A listed group's settings, as they apply to one chat in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupRule<'a> {
    pub allow_from: Option<&'a [String]>,
    pub require_mention: bool,
    /// False when the group lists the chats it is served in and this is not one of them
    /// (Discord: a guild's `channels`).
    pub chat_listed: bool,
}

/// Who may send direct messages on one enabled channel (see
/// [`super::ChannelsConfig::dm_access`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmAccess<'a> {
    /// The channel id (`telegram`, `discord`).
    pub channel: &'static str,
    pub allow_from: &'a [String],
    pub dm_policy: DmPolicy,
}

/// Who may answer approval requests on a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owners<'a> {
    /// Whoever reaches the chat: the web chat and the HTTP API, where holding the gateway
    /// token is what makes an owner.
    AnyoneWithAccess,
    /// These entries (user ids, @usernames, `"*"`).
    Listed(Vec<&'a str>),
}

fn owners_of<'a>(owners: &'a Option<Vec<String>>, allow_from: &'a [String]) -> Owners<'a> {
    match owners {
        Some(list) => Owners::Listed(list.iter().map(String::as_str).collect()),
        None => Owners::Listed(
            allow_from
                .iter()
                .map(String::as_str)
                .filter(|a| *a != "*")
                .collect(),
        ),
    }
}

impl super::ChannelsConfig {
    /// Who may answer approval requests on `channel`: `channels.<ch>.owners`, by default
    /// the channel's DM `allowFrom` entries.
    pub fn owners(&self, channel: &str) -> Owners<'_> {
        match channel {
            switchboard_channels::telegram::CHANNEL_ID => {
                owners_of(&self.telegram.owners, &self.telegram.allow_from)
            }
            switchboard_channels::discord::CHANNEL_ID => {
                owners_of(&self.discord.owners, &self.discord.allow_from)
            }
            switchboard_channels::slack::CHANNEL_ID => {
                owners_of(&self.slack.owners, &self.slack.allow_from)
            }
            _ => Owners::AnyoneWithAccess,
        }
    }

    /// Whether `channel` shows link previews and embeds of what the bot sends.
    pub fn link_preview(&self, channel: &str) -> bool {
        match channel {
            switchboard_channels::telegram::CHANNEL_ID => self.telegram.link_preview,
            switchboard_channels::discord::CHANNEL_ID => self.discord.link_preview,
            _ => false,
        }
    }

    /// The DM rules of each enabled channel that has allowlists, so callers ask the
    /// config instead of naming channels.
    pub fn dm_access(&self) -> Vec<DmAccess<'_>> {
        let (t, d, s) = (&self.telegram, &self.discord, &self.slack);
        [
            (
                switchboard_channels::telegram::CHANNEL_ID,
                t.enabled,
                &t.allow_from,
                t.dm_policy,
            ),
            (
                switchboard_channels::discord::CHANNEL_ID,
                d.enabled,
                &d.allow_from,
                d.dm_policy,
            ),
            (
                switchboard_channels::slack::CHANNEL_ID,
                s.enabled,
                &s.allow_from,
                s.dm_policy,
            ),
        ]
        .into_iter()
        .filter(|(_, enabled, _, _)| *enabled)
        .map(|(channel, _, allow_from, dm_policy)| DmAccess {
            channel,
            allow_from,
            dm_policy,
        })
        .collect()
    }

    /// The access rules for a message from `origin`; `None` for channels without any
    /// (the web chat, the HTTP API).
    pub fn access_rules(&self, origin: &switchboard_channels::Origin) -> Option<AccessRules<'_>> {
        match origin.channel.as_str() {
            switchboard_channels::telegram::CHANNEL_ID => {
                let t = &self.telegram;
                let group = t
                    .groups
                    .get(&origin.chat_id)
                    .or_else(|| t.groups.get(ANY_GROUP))
                    .map(|g| GroupRule {
                        allow_from: g.allow_from.as_deref(),
                        require_mention: g.require_mention,
                        chat_listed: true,
                    });
                Some(AccessRules {
                    section: "channels.telegram",
                    allow_from: &t.allow_from,
                    dm_policy: t.dm_policy,
                    group_policy: t.group_policy,
                    group_allow_from: t.group_allow_from.as_deref(),
                    group,
                })
            }
            switchboard_channels::discord::CHANNEL_ID => {
                let d = &self.discord;
                // The guild id travels as the origin's account.
                let group = origin
                    .account
                    .as_deref()
                    .and_then(|g| d.guilds.get(g))
                    .or_else(|| d.guilds.get(ANY_GROUP))
                    .map(|g| GroupRule {
                        allow_from: g.allow_from.as_deref(),
                        require_mention: g.require_mention,
                        chat_listed: g.channels.is_empty() || g.channels.contains(&origin.chat_id),
                    });
                Some(AccessRules {
                    section: "channels.discord",
                    allow_from: &d.allow_from,
                    dm_policy: d.dm_policy,
                    group_policy: d.group_policy,
                    group_allow_from: d.group_allow_from.as_deref(),
                    group,
                })
            }
            switchboard_channels::slack::CHANNEL_ID => {
                Some(self.slack.access_rules(&origin.chat_id))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ChannelsConfig;

    /// Catches: owners not defaulting to the DM `allowFrom`, `"*"` there making everyone an
    /// owner, an explicit `owners` ignored, or the web chat left without an owner.
    #[test]
    fn owners_default_to_the_dm_allowlist_without_its_wildcard() {
        let mut c = ChannelsConfig::default();
        c.telegram.allow_from = vec!["42".into(), "*".into(), "@ann".into()];
        assert_eq!(c.owners("telegram"), Owners::Listed(vec!["42", "@ann"]));
        c.telegram.owners = Some(vec!["7".into()]);
        assert_eq!(c.owners("telegram"), Owners::Listed(vec!["7"]));
        assert_eq!(c.owners("discord"), Owners::Listed(vec![]));
        assert_eq!(c.owners("webchat"), Owners::AnyoneWithAccess);
        assert!(!c.link_preview("telegram") && !c.link_preview("discord"));
    }
}
