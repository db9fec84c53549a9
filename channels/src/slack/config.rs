//! `channels.slack` (after OpenClaw's): the tokens, the Web API base, the DM and channel
//! policies with their allowlists, per-channel mention rules, owners, and whether a
//! mention at the top of a channel is answered in a thread under it; its checks.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::section::{
    check_http_url, check_range, path, Access, ChannelSection, DmPolicy, GroupPolicy, GroupRule,
    PathSeg, SectionIssue, ANY_GROUP,
};
use crate::{ids, Origin};

/// The environment variable the bot token falls back to.
pub const BOT_TOKEN_ENV: &str = "SLACK_BOT_TOKEN";
/// The environment variable the app-level token falls back to.
pub const APP_TOKEN_ENV: &str = "SLACK_APP_TOKEN";

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

/// A Slack id of the kinds `first` lists (`U`/`W` users, `C`/`G`/`D` conversations).
fn slack_id(s: &str, first: &[char]) -> bool {
    s.len() >= 2
        && s.len() <= 32
        && s.starts_with(first)
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

fn users(out: &mut Vec<SectionIssue>, at: &[PathSeg], list: &[String]) {
    for (i, who) in list.iter().enumerate() {
        if who != "*" && !slack_id(who, &['U', 'W']) {
            let mut p = at.to_vec();
            p.push(PathSeg::Index(i));
            out.push(SectionIssue {
                path: p,
                message: format!("must be a Slack user id (U… or W…) or \"*\", got {who:?}"),
            });
        }
    }
}

impl ChannelSection for SlackConfig {
    fn enabled(&self) -> bool {
        self.enabled
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    fn secrets(&self) -> Vec<String> {
        self.bot_token
            .iter()
            .chain(self.app_token.iter())
            .cloned()
            .collect()
    }

    fn secret_env(&self) -> &'static [&'static str] {
        &[BOT_TOKEN_ENV, APP_TOKEN_ENV]
    }

    fn access(&self) -> Option<Access<'_>> {
        Some(Access {
            allow_from: &self.allow_from,
            dm_policy: self.dm_policy,
            group_policy: self.group_policy,
            group_allow_from: None,
            owners: self.owners.as_deref(),
            groups_key: "channels",
            any_group: self
                .channels
                .get(ANY_GROUP)
                .map(|c| c.allow_from.as_deref()),
        })
    }

    fn group_rule(&self, origin: &Origin) -> Option<GroupRule<'_>> {
        self.channels
            .get(&origin.chat_id)
            .or_else(|| self.channels.get(ANY_GROUP))
            .map(|c| GroupRule {
                allow_from: c.allow_from.as_deref(),
                require_mention: c.require_mention,
                chat_listed: true,
            })
    }

    fn check(&self, out: &mut Vec<SectionIssue>) {
        check_http_url(out, "apiUrl", &self.api_url);
        check_range(
            out,
            "textChunkLimit",
            self.text_chunk_limit as u64,
            200,
            4000,
        );
        for (key, token, prefix) in [
            ("botToken", &self.bot_token, "xoxb-"),
            ("appToken", &self.app_token, "xapp-"),
        ] {
            if let Some(t) = token.as_deref().filter(|t| !t.starts_with(prefix)) {
                let shown: String = t.chars().take(5).collect();
                out.push(SectionIssue::at(
                    key,
                    format!(
                        "must be a Slack token starting with {prefix}, got one starting with {shown:?}"
                    ),
                ));
            }
        }
        users(out, &[PathSeg::Key("allowFrom".into())], &self.allow_from);
        if let Some(list) = &self.owners {
            users(out, &[PathSeg::Key("owners".into())], list);
        }
        for (id, c) in &self.channels {
            let at = vec![PathSeg::Key("channels".into()), PathSeg::Key(id.clone())];
            if id != ANY_GROUP && !slack_id(id, &['C', 'G', 'D']) {
                out.push(SectionIssue {
                    path: at.clone(),
                    message: format!(
                        "channel keys must be Slack conversation ids (C…, G…) or \"*\", got {id:?}"
                    ),
                });
            }
            if let Some(list) = &c.allow_from {
                users(out, &path(&at, &["allowFrom"]), list);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issues(v: serde_json::Value) -> Vec<String> {
        let s: SlackConfig = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        let mut out = Vec::new();
        s.check(&mut out);
        out.iter()
            .map(|i| {
                let path: Vec<String> = i
                    .path
                    .iter()
                    .map(|p| match p {
                        PathSeg::Key(k) => format!(".{k}"),
                        PathSeg::Index(n) => format!("[{n}]"),
                    })
                    .collect();
                format!("channels.slack{}: {}", path.concat(), i.message)
            })
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
