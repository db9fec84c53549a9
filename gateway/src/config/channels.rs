//! `channels.*` as the gateway reads it: every section through
//! [`switchboard_channels::section::ChannelSection`] (the section types live with their
//! channels), so access checks, owners and link previews never name a channel.

pub use switchboard_channels::discord::{DiscordConfig, DiscordGuildConfig};
pub use switchboard_channels::section::{
    Access, ChannelSection, DmPolicy, GroupConfig, GroupPolicy, GroupRule, ANY_GROUP,
};
pub use switchboard_channels::telegram::{TelegramConfig, TelegramMode};
pub use switchboard_channels::webchat::WebchatConfig;

/// What the access check needs from a channel's config for one chat: the same questions
/// for every channel that has allowlists. The web chat and the HTTP API have none (they
/// are local, and token-guarded when exposed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessRules<'a> {
    /// The channel id (its section is `channels.<id>`).
    pub channel: &'static str,
    pub allow_from: &'a [String],
    pub dm_policy: DmPolicy,
    pub group_policy: GroupPolicy,
    pub group_allow_from: Option<&'a [String]>,
    /// For a group chat: its entry (by id, else `"*"`), if listed.
    pub group: Option<GroupRule<'a>>,
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

impl super::ChannelsConfig {
    /// The section of the channel `id`, if there is one.
    pub fn section(&self, id: &str) -> Option<&dyn ChannelSection> {
        self.sections()
            .into_iter()
            .find(|(c, _)| *c == id)
            .map(|(_, s)| s)
    }

    /// The ids of every channel the config has a section for (the delivery targets of
    /// cron jobs), in the order of [`super::ChannelsConfig::sections`].
    pub fn ids() -> Vec<&'static str> {
        super::ChannelsConfig::default()
            .sections()
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }

    /// Every environment variable a channel reads a secret from.
    pub fn secret_env() -> Vec<&'static str> {
        super::ChannelsConfig::default()
            .sections()
            .into_iter()
            .flat_map(|(_, s)| s.secret_env().iter().copied())
            .collect()
    }

    /// The secrets written in the channels' sections (bot tokens).
    pub fn secrets(&self) -> Vec<String> {
        self.sections()
            .into_iter()
            .flat_map(|(_, s)| s.secrets())
            .collect()
    }

    /// Who may answer approval requests on `channel`: `channels.<ch>.owners`, by default
    /// the channel's DM `allowFrom` entries.
    pub fn owners(&self, channel: &str) -> Owners<'_> {
        let Some(access) = self.section(channel).and_then(|s| s.access()) else {
            return Owners::AnyoneWithAccess;
        };
        match access.owners {
            Some(list) => Owners::Listed(list.iter().map(String::as_str).collect()),
            None => Owners::Listed(
                access
                    .allow_from
                    .iter()
                    .map(String::as_str)
                    .filter(|a| *a != "*")
                    .collect(),
            ),
        }
    }

    /// Whether `channel` shows link previews and embeds of what the bot sends.
    pub fn link_preview(&self, channel: &str) -> bool {
        self.section(channel).is_some_and(|s| s.link_preview())
    }

    /// The DM rules of each enabled channel that has allowlists, so callers ask the
    /// config instead of naming channels.
    pub fn dm_access(&self) -> Vec<DmAccess<'_>> {
        self.sections()
            .into_iter()
            .filter(|(_, s)| s.enabled())
            .filter_map(|(channel, s)| {
                s.access().map(|a| DmAccess {
                    channel,
                    allow_from: a.allow_from,
                    dm_policy: a.dm_policy,
                })
            })
            .collect()
    }

    /// The access rules for a message from `origin`; `None` for channels without any
    /// (the web chat, the HTTP API).
    pub fn access_rules(&self, origin: &switchboard_channels::Origin) -> Option<AccessRules<'_>> {
        let (id, section) = self
            .sections()
            .into_iter()
            .find(|(c, _)| *c == origin.channel)?;
        let a = section.access()?;
        Some(AccessRules {
            channel: id,
            allow_from: a.allow_from,
            dm_policy: a.dm_policy,
            group_policy: a.group_policy,
            group_allow_from: a.group_allow_from,
            group: section.group_rule(origin),
        })
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

    /// Catches: a section missing from the list, or its id differing from its config key.
    #[test]
    fn every_section_is_listed_under_its_config_key() {
        let c = serde_json::to_value(ChannelsConfig::default()).unwrap_or_default();
        let keys: Vec<&str> = c
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut ids = ChannelsConfig::ids();
        ids.sort_unstable();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(ids, keys);
    }
}
