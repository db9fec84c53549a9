//! `channels.discord`: the Discord section of the config file and its checks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::section::{
    check_http_url, check_range, check_senders, keys, path, Access, ChannelSection, DmPolicy,
    GroupPolicy, GroupRule, PathSeg, SectionIssue, ANY_GROUP,
};
use crate::{ids, Origin};

/// The environment variable the bot token falls back to.
pub const TOKEN_ENV: &str = "DISCORD_BOT_TOKEN";

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

/// A Discord id (user, guild, channel): a snowflake of up to 20 digits.
fn snowflake(s: &str) -> bool {
    !s.is_empty() && s.len() <= 20 && s.chars().all(|c| c.is_ascii_digit())
}

const USER_ID: &str = "a numeric Discord user id";

impl ChannelSection for DiscordConfig {
    fn enabled(&self) -> bool {
        self.enabled
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    fn secrets(&self) -> Vec<String> {
        self.token.iter().cloned().collect()
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
            groups_key: "guilds",
            any_group: self.guilds.get(ANY_GROUP).map(|g| g.allow_from.as_deref()),
        })
    }

    fn group_rule(&self, origin: &Origin) -> Option<GroupRule<'_>> {
        // The guild id travels as the origin's account.
        origin
            .account
            .as_deref()
            .and_then(|g| self.guilds.get(g))
            .or_else(|| self.guilds.get(ANY_GROUP))
            .map(|g| GroupRule {
                allow_from: g.allow_from.as_deref(),
                require_mention: g.require_mention,
                chat_listed: g.channels.is_empty() || g.channels.contains(&origin.chat_id),
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
            200,
            2000,
        );
        check_senders(
            out,
            &keys("allowFrom"),
            &self.allow_from,
            snowflake,
            USER_ID,
        );
        if let Some(list) = &self.group_allow_from {
            check_senders(out, &keys("groupAllowFrom"), list, snowflake, USER_ID);
        }
        for (guild, g) in &self.guilds {
            let at = vec![PathSeg::Key("guilds".into()), PathSeg::Key(guild.clone())];
            if guild != ANY_GROUP && !snowflake(guild) {
                out.push(SectionIssue {
                    path: at.clone(),
                    message: format!(
                        "guild keys must be numeric guild ids or \"*\", got {guild:?}"
                    ),
                });
            }
            for (i, ch) in g.channels.iter().enumerate() {
                if !snowflake(ch) {
                    let mut p = path(&at, &["channels"]);
                    p.push(PathSeg::Index(i));
                    out.push(SectionIssue {
                        path: p,
                        message: format!("must be a numeric channel id, got {ch:?}"),
                    });
                }
            }
            if let Some(list) = &g.allow_from {
                check_senders(out, &path(&at, &["allowFrom"]), list, snowflake, USER_ID);
            }
        }
    }
}
