//! What the gateway asks of every channel's config section (`channels.<id>`), through the
//! [`ChannelSection`] trait: whether it is enabled, its secrets, its allowlists, its own
//! checks. Also the access settings the sections share (DM and group policies, group
//! entries) and the helpers their checks use, so each channel's config type lives in its
//! own folder and the gateway reads every section the same way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{ids, Origin};

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

/// A channel's allowlist settings, read the same way for every channel that has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access<'a> {
    pub allow_from: &'a [String],
    pub dm_policy: DmPolicy,
    pub group_policy: GroupPolicy,
    pub group_allow_from: Option<&'a [String]>,
    /// `owners`, if set (unset: the `allowFrom` entries but `"*"`).
    pub owners: Option<&'a [String]>,
    /// The key the group entries sit under (`groups`, `guilds`).
    pub groups_key: &'static str,
    /// The `allowFrom` of the `"*"` group entry: `None` without such an entry,
    /// `Some(None)` when it has no `allowFrom` of its own.
    pub any_group: Option<Option<&'a [String]>>,
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

/// One step of a key path inside a section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// A problem in a section, at a key path relative to `channels.<id>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionIssue {
    pub path: Vec<PathSeg>,
    pub message: String,
}

impl SectionIssue {
    /// An issue at the dotted key path `at` (e.g. `"apiUrl"`).
    pub fn at(at: &str, message: impl Into<String>) -> Self {
        SectionIssue {
            path: keys(at),
            message: message.into(),
        }
    }
}

/// The segments of a dotted key path.
pub fn keys(dotted: &str) -> Vec<PathSeg> {
    dotted
        .split('.')
        .filter(|k| !k.is_empty())
        .map(|k| PathSeg::Key(k.to_owned()))
        .collect()
}

/// The config section of one channel (`channels.<id>`), as the gateway reads it.
pub trait ChannelSection: Send + Sync {
    /// Whether the channel runs.
    fn enabled(&self) -> bool;

    /// The section as JSON: a changed value restarts the channel on reload.
    fn to_json(&self) -> serde_json::Value;

    /// Secrets written in the section (bot tokens): kept out of commands' environments.
    fn secrets(&self) -> Vec<String> {
        Vec::new()
    }

    /// The environment variables the channel reads its secrets from.
    fn secret_env(&self) -> &'static [&'static str] {
        &[]
    }

    /// The allowlists; `None` for a channel without any (the web chat: local, and
    /// token-guarded when exposed).
    fn access(&self) -> Option<Access<'_>> {
        None
    }

    /// The listed group entry (by id, else `"*"`) a group message from `origin` falls
    /// under, if any.
    fn group_rule(&self, origin: &Origin) -> Option<GroupRule<'_>> {
        let _ = origin;
        None
    }

    /// Whether the platform shows link previews and embeds of what the bot sends.
    fn link_preview(&self) -> bool {
        false
    }

    /// The section's own checks (ranges, URLs, allowlist entries, group keys), with key
    /// paths relative to the section.
    fn check(&self, out: &mut Vec<SectionIssue>) {
        let _ = out;
    }
}

/// Whether `url` starts with `http://` or `https://`; else an issue at `at`.
pub fn check_http_url(out: &mut Vec<SectionIssue>, at: &str, url: &str) {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        out.push(SectionIssue::at(
            at,
            format!("must start with http:// or https://, got {url:?}"),
        ));
    }
}

/// Whether `v` lies in `min..=max`; else an issue at `at`.
pub fn check_range(out: &mut Vec<SectionIssue>, at: &str, v: u64, min: u64, max: u64) {
    if v < min || v > max {
        out.push(SectionIssue::at(
            at,
            format!("must be between {min} and {max}, got {v}"),
        ));
    }
}

/// Checks an allowlist of senders at `at`: platform user ids (`id` says which are; `what`
/// names them, e.g. "a numeric Telegram user id"), `@username`s, or `"*"` (anyone).
pub fn check_senders(
    out: &mut Vec<SectionIssue>,
    at: &[PathSeg],
    list: &[String],
    id: fn(&str) -> bool,
    what: &str,
) {
    for (i, who) in list.iter().enumerate() {
        let username = who.strip_prefix('@').is_some_and(|u| {
            !u.is_empty()
                && u.len() <= 64
                && u.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        });
        if !(username || id(who) || who == "*") {
            let mut path = at.to_vec();
            path.push(PathSeg::Index(i));
            out.push(SectionIssue {
                path,
                message: format!("must be {what}, an @username or \"*\", got {who:?}"),
            });
        }
    }
}

/// `at` followed by `more`.
pub fn path(at: &[PathSeg], more: &[&str]) -> Vec<PathSeg> {
    let mut p = at.to_vec();
    p.extend(more.iter().map(|k| PathSeg::Key((*k).to_owned())));
    p
}
