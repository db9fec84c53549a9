//! Who may talk to the agents (README, Security): per channel `allowFrom`, the DM policy
//! (allowlist, pairing, open, disabled), the group policy with listed groups and their own
//! sender lists, and "in groups only when addressed". Decided before anything else, so an
//! unknown sender's or group's message never reaches an agent, a command or a tool.

use switchboard_channels::{ChatKind, InboundMessage};

use crate::config::{AccessRules, Config, DmPolicy, GroupPolicy};
use crate::store::{Pairing, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Drop silently (not addressed in a group, or not allowed); the reason is logged.
    Ignore(&'static str),
    /// An unknown DM sender in pairing mode: answer with this text, take nothing else.
    Pairing(String),
}

/// Whether `sender_id`, or `username` for an `@name` entry, is in `allow_from` (`"*"`
/// lets anyone in). Only the platform's username field is matched by `@name`, never a
/// display or first name.
pub fn listed(allow_from: &[String], sender_id: &str, username: Option<&str>) -> bool {
    allow_from.iter().any(|a| match a.strip_prefix('@') {
        Some(name) => username.is_some_and(|u| !u.is_empty() && u.eq_ignore_ascii_case(name)),
        None => a == "*" || a == sender_id,
    })
}

pub async fn check(
    store: &Store,
    cfg: &Config,
    msg: &InboundMessage,
) -> Result<Verdict, StoreError> {
    let Some(rules) = cfg.channels.access_rules(&msg.origin) else {
        return Ok(Verdict::Allow);
    };
    match msg.origin.kind {
        ChatKind::Group => Ok(group_verdict(&rules, msg)),
        ChatKind::Direct => {
            if listed(
                rules.allow_from,
                &msg.sender_id,
                msg.sender_username.as_deref(),
            ) {
                return Ok(Verdict::Allow);
            }
            match rules.dm_policy {
                DmPolicy::Open => Ok(Verdict::Allow),
                DmPolicy::Disabled => {
                    Ok(Verdict::Ignore("direct messages are disabled (dmPolicy)"))
                }
                DmPolicy::Allowlist => Ok(Verdict::Ignore("sender not in allowFrom")),
                DmPolicy::Pairing => pairing(store, msg).await,
            }
        }
    }
}

/// Whether the sender of a button press may press it: the same rules as a message (a
/// press is always addressed), but read only — a stranger's press in a pairing DM gets no
/// pairing code, only a refusal.
pub async fn press_allowed(
    store: &Store,
    cfg: &Config,
    msg: &InboundMessage,
) -> Result<bool, StoreError> {
    let Some(rules) = cfg.channels.access_rules(&msg.origin) else {
        return Ok(true);
    };
    Ok(match msg.origin.kind {
        ChatKind::Group => group_verdict(&rules, msg) == Verdict::Allow,
        ChatKind::Direct => match rules.dm_policy {
            _ if listed(
                rules.allow_from,
                &msg.sender_id,
                msg.sender_username.as_deref(),
            ) =>
            {
                true
            }
            DmPolicy::Open => true,
            DmPolicy::Disabled | DmPolicy::Allowlist => false,
            DmPolicy::Pairing => {
                store
                    .pairing_approved(&msg.origin.channel, &msg.sender_id)
                    .await?
            }
        },
    })
}

/// A group message: the group must be served (policy, listed), the sender allowed in it,
/// and the message addressed to the bot unless the group says otherwise.
fn group_verdict(rules: &AccessRules<'_>, msg: &InboundMessage) -> Verdict {
    if rules.group_policy == GroupPolicy::Disabled {
        return Verdict::Ignore("group messages are disabled (groupPolicy)");
    }
    match rules.group {
        None if rules.group_policy == GroupPolicy::Allowlist => {
            return Verdict::Ignore("group not listed (groupPolicy allowlist)");
        }
        Some(g) if !g.chat_listed => return Verdict::Ignore("channel not in the guild's channels"),
        _ => {}
    }
    // The group's own list, else the channel's group list, else its DM list; none of
    // them set (or all empty) lets everyone in a served group address the bot.
    let senders = rules
        .group
        .and_then(|g| g.allow_from)
        .or(rules.group_allow_from)
        .unwrap_or(rules.allow_from);
    if !senders.is_empty() && !listed(senders, &msg.sender_id, msg.sender_username.as_deref()) {
        return Verdict::Ignore("sender not allowed in this group");
    }
    let require_mention = rules.group.is_none_or(|g| g.require_mention);
    if require_mention && !msg.addressed {
        return Verdict::Ignore("group message not addressed to the bot");
    }
    Verdict::Allow
}

async fn pairing(store: &Store, msg: &InboundMessage) -> Result<Verdict, StoreError> {
    let channel = &msg.origin.channel;
    Ok(
        match store
            .pairing_for(channel, &msg.sender_id, msg.sender_name.as_deref())
            .await?
        {
            Pairing::Approved => Verdict::Allow,
            Pairing::Pending { code, notify: true } => Verdict::Pairing(format!(
                "Hi! This bot only talks to people its owner approved. Your pairing code is {code}. It is valid for an hour.\n\
                 Ask the owner to run: switchboard pairing approve {channel} {code}"
            )),
            Pairing::Pending { notify: false, .. } => {
                Verdict::Ignore("sender is waiting for pairing approval")
            }
            Pairing::Full => Verdict::Ignore("too many pending pairing requests on this channel"),
            Pairing::Rejected => Verdict::Ignore("an operator rejected this sender's pairing request"),
        },
    )
}

#[cfg(test)]
mod tests;
