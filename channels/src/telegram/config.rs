//! `channels.telegram`: the Telegram section of the config file and its checks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::section::{
    check_http_url, check_range, check_senders, keys, path, Access, ChannelSection, DmPolicy,
    GroupConfig, GroupPolicy, GroupRule, PathSeg, SectionIssue, ANY_GROUP,
};
use crate::{ids, Origin};

/// The environment variable the bot token falls back to.
pub const TOKEN_ENV: &str = "TELEGRAM_BOT_TOKEN";

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

/// A Telegram user id: a positive number.
fn user_id(who: &str) -> bool {
    who.parse::<i64>().is_ok_and(|n| n > 0)
}

const USER_ID: &str = "a numeric Telegram user id";

impl ChannelSection for TelegramConfig {
    fn enabled(&self) -> bool {
        self.enabled
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    fn secrets(&self) -> Vec<String> {
        self.bot_token.iter().cloned().collect()
    }

    fn secret_env(&self) -> &'static [&'static str] {
        &[TOKEN_ENV]
    }

    fn access(&self) -> Option<Access<'_>> {
        Some(Access {
            allow_from: &self.allow_from,
            dm_policy: self.dm_policy,
            group_policy: self.group_policy,
            group_allow_from: self.group_allow_from.as_deref(),
            owners: self.owners.as_deref(),
            groups_key: "groups",
            any_group: self.groups.get(ANY_GROUP).map(|g| g.allow_from.as_deref()),
        })
    }

    fn group_rule(&self, origin: &Origin) -> Option<GroupRule<'_>> {
        self.groups
            .get(&origin.chat_id)
            .or_else(|| self.groups.get(ANY_GROUP))
            .map(|g| GroupRule {
                allow_from: g.allow_from.as_deref(),
                require_mention: g.require_mention,
                chat_listed: true,
            })
    }

    fn link_preview(&self) -> bool {
        self.link_preview
    }

    fn check(&self, out: &mut Vec<SectionIssue>) {
        check_http_url(out, "apiUrl", &self.api_url);
        check_range(
            out,
            "textChunkLimit",
            self.text_chunk_limit as u64,
            64,
            4096,
        );
        check_range(out, "pollTimeoutSeconds", self.poll_timeout_seconds, 1, 50);
        if self.mode == TelegramMode::Webhook {
            match &self.webhook_url {
                Some(u) if u.starts_with("https://") || u.starts_with("http://") => {}
                _ => out.push(SectionIssue::at(
                    "webhookUrl",
                    "webhook mode needs webhookUrl (the public URL of POST /telegram/webhook)",
                )),
            }
            match &self.webhook_secret {
                Some(s)
                    if s.len() >= 8
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => {}
                _ => out.push(SectionIssue::at(
                    "webhookSecret",
                    "webhook mode needs webhookSecret: 8-256 characters of A-Z, a-z, 0-9, _ and -",
                )),
            }
        }
        check_senders(out, &keys("allowFrom"), &self.allow_from, user_id, USER_ID);
        if let Some(list) = &self.group_allow_from {
            check_senders(out, &keys("groupAllowFrom"), list, user_id, USER_ID);
        }
        for (chat, g) in &self.groups {
            let at = vec![PathSeg::Key("groups".into()), PathSeg::Key(chat.clone())];
            if chat != ANY_GROUP && chat.parse::<i64>().is_err() {
                out.push(SectionIssue {
                    path: at.clone(),
                    message: format!(
                        "group keys must be numeric chat ids (e.g. \"-1001234567890\") or \"*\", got {chat:?}"
                    ),
                });
            }
            if let Some(list) = &g.allow_from {
                check_senders(out, &path(&at, &["allowFrom"]), list, user_id, USER_ID);
            }
        }
    }
}
