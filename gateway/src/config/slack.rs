//! Schema of `channels.slack` (after OpenClaw's): the tokens, the Web API base, the DM and
//! channel policies with their allowlists, per-channel mention rules, owners, and whether
//! a mention at the top of a channel is answered in a thread under it. Plus its checks and
//! the access rules it gives the routing.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::channels::{AccessRules, DmPolicy, GroupPolicy, GroupRule, ANY_GROUP};
use super::error::{Issue, KeyPath};
use super::ids;

/// One Slack channel's settings (`channels.slack.channels.<id>`, or `"*"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SlackChannelConfig {
    /// Answer only when @mentioned (or in a thread the bot answered in) or sent a slash
    /// command.
    pub require_mention: bool,
    /// Who may address the bot in this channel (Slack user ids); unset: the channel's
    /// `allowFrom`, else anyone in the channel.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub allow_from: Option<Vec<String>>,
}

impl Default for SlackChannelConfig {
    fn default() -> Self {
        SlackChannelConfig {
            require_mention: true,
            allow_from: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SlackConfig {
    pub enabled: bool,
    /// Bot token (`xoxb-…`, the Web API); env fallback `SLACK_BOT_TOKEN`.
    pub bot_token: Option<String>,
    /// App-level token (`xapp-…`, scope `connections:write`, Socket Mode); env fallback
    /// `SLACK_APP_TOKEN`.
    pub app_token: Option<String>,
    /// The Web API base (a proxy, or a fake in tests). The Socket Mode URL is whatever
    /// `apps.connections.open` there answers.
    pub api_url: String,
    /// Slack user ids (`U…`) allowed to talk to the bot in DMs, and in channels unless the
    /// channel's own `allowFrom` says otherwise. `"*"` = anyone.
    #[serde(deserialize_with = "ids::list")]
    #[schemars(with = "Vec<ids::IdSchema>")]
    pub allow_from: Vec<String>,
    pub dm_policy: DmPolicy,
    pub group_policy: GroupPolicy,
    /// Channels the bot serves, by conversation id (`C…`, `G…`), or `"*"` for every one.
    pub channels: BTreeMap<String, SlackChannelConfig>,
    /// Who may answer approval requests (Slack user ids); unset: the `allowFrom` entries
    /// (but `"*"`: an owner is named). `"*"` = anyone.
    #[serde(deserialize_with = "ids::optional")]
    #[schemars(with = "Option<Vec<ids::IdSchema>>")]
    pub owners: Option<Vec<String>>,
    /// Answer a mention at the top of a channel in a thread under it (the thread is its
    /// own session); `false` answers at the top level.
    pub reply_in_thread: bool,
    /// Longest message sent, in characters (at most 4000).
    pub text_chunk_limit: usize,
}

impl Default for SlackConfig {
    fn default() -> Self {
        SlackConfig {
            enabled: false,
            bot_token: None,
            app_token: None,
            api_url: "https://slack.com/api".into(),
            allow_from: Vec::new(),
            dm_policy: DmPolicy::Pairing,
            group_policy: GroupPolicy::Allowlist,
            channels: BTreeMap::new(),
            owners: None,
            reply_in_thread: true,
            text_chunk_limit: 4000,
        }
    }
}

impl SlackConfig {
    /// The access rules for a message in conversation `chat_id`.
    pub fn access_rules(&self, chat_id: &str) -> AccessRules<'_> {
        let group = self
            .channels
            .get(chat_id)
            .or_else(|| self.channels.get(ANY_GROUP))
            .map(|c| GroupRule {
                allow_from: c.allow_from.as_deref(),
                require_mention: c.require_mention,
                chat_listed: true,
            });
        AccessRules {
            section: "channels.slack",
            allow_from: &self.allow_from,
            dm_policy: self.dm_policy,
            group_policy: self.group_policy,
            group_allow_from: None,
            group,
        }
    }
}

/// A Slack id of the kinds `first` lists (`U`/`W` users, `C`/`G`/`D` conversations).
fn slack_id(s: &str, first: &[char]) -> bool {
    s.len() >= 2
        && s.len() <= 32
        && s.starts_with(first)
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

fn users(out: &mut Vec<Issue>, at: &KeyPath, list: &[String]) {
    for (i, who) in list.iter().enumerate() {
        if who != "*" && !slack_id(who, &['U', 'W']) {
            out.push(Issue::new(
                at.index(i),
                format!("must be a Slack user id (U… or W…) or \"*\", got {who:?}"),
            ));
        }
    }
}

/// The checks of `channels.slack`.
pub(crate) fn validate(s: &SlackConfig, out: &mut Vec<Issue>) {
    let at = KeyPath::dotted("channels.slack");
    if !(s.api_url.starts_with("http://") || s.api_url.starts_with("https://")) {
        out.push(Issue::new(
            at.key("apiUrl"),
            format!("must start with http:// or https://, got {:?}", s.api_url),
        ));
    }
    if !(200..=4000).contains(&s.text_chunk_limit) {
        out.push(Issue::new(
            at.key("textChunkLimit"),
            format!("must be between 200 and 4000, got {}", s.text_chunk_limit),
        ));
    }
    for (key, token, prefix) in [
        ("botToken", &s.bot_token, "xoxb-"),
        ("appToken", &s.app_token, "xapp-"),
    ] {
        if let Some(t) = token.as_deref().filter(|t| !t.starts_with(prefix)) {
            let shown: String = t.chars().take(5).collect();
            out.push(Issue::new(
                at.key(key),
                format!(
                    "must be a Slack token starting with {prefix}, got one starting with {shown:?}"
                ),
            ));
        }
    }
    users(out, &at.key("allowFrom"), &s.allow_from);
    if let Some(list) = &s.owners {
        users(out, &at.key("owners"), list);
    }
    for (id, c) in &s.channels {
        let at = at.key("channels").key(id);
        if id != ANY_GROUP && !slack_id(id, &['C', 'G', 'D']) {
            out.push(Issue::new(
                at.clone(),
                format!(
                    "channel keys must be Slack conversation ids (C…, G…) or \"*\", got {id:?}"
                ),
            ));
        }
        if let Some(list) = &c.allow_from {
            users(out, &at.key("allowFrom"), list);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issues(v: serde_json::Value) -> Vec<String> {
        let s: SlackConfig = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        let mut out = Vec::new();
        validate(&s, &mut out);
        out.iter()
            .map(|i| format!("{}: {}", i.path, i.message))
            .collect()
    }

    /// Catches: an unknown key accepted, a bad id or token shape let through without its
    /// key path, OpenClaw's shape refused.
    #[test]
    fn openclaw_shape_is_read_and_bad_values_are_named() {
        assert!(issues(
            serde_json::json!({"enabled": true, "botToken": "xoxb-1", "appToken": "xapp-1",
            "dmPolicy": "allowlist", "allowFrom": ["U123"], "groupPolicy": "open",
            "channels": {"C123": {"requireMention": false, "allowFrom": ["U9"]}, "*": {}},
            "owners": ["U123"], "replyInThread": false})
        )
        .is_empty());
        let bad = issues(
            serde_json::json!({"botToken": "xapp-1", "allowFrom": ["ann"],
            "channels": {"general": {}}, "apiUrl": "slack.com"}),
        );
        let text = bad.join("\n");
        for key in [
            "channels.slack.botToken",
            "channels.slack.allowFrom[0]",
            "channels.slack.channels.general",
            "channels.slack.apiUrl",
        ] {
            assert!(text.contains(key), "{key} not named in {text}");
        }
        assert!(serde_json::from_value::<SlackConfig>(serde_json::json!({"token": "x"})).is_err());
    }
}
