//! Who may talk to the agents: per channel `allowFrom`, the DM policy (allowlist,
//! pairing, open), and "in groups only when addressed". Decided before anything else, so
//! an unknown sender's message never reaches an agent or a command.

use switchboard_channels::{ChatKind, InboundMessage};

use crate::config::{Config, DmPolicy};
use crate::store::{Pairing, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Drop silently (not addressed in a group, or not allowed); the reason is logged.
    Ignore(&'static str),
    /// An unknown DM sender in pairing mode: answer with this text, take nothing else.
    Pairing(String),
}

struct Policy<'a> {
    allow_from: &'a [String],
    dm_policy: DmPolicy,
    require_mention: bool,
}

fn policy<'a>(cfg: &'a Config, channel: &str) -> Option<Policy<'a>> {
    match channel {
        "telegram" => {
            let t = &cfg.channels.telegram;
            Some(Policy {
                allow_from: &t.allow_from,
                dm_policy: t.dm_policy,
                require_mention: t.groups.require_mention,
            })
        }
        "discord" => {
            let d = &cfg.channels.discord;
            Some(Policy {
                allow_from: &d.allow_from,
                dm_policy: d.dm_policy,
                require_mention: true,
            })
        }
        // The web chat and the HTTP API are local (and token-guarded when exposed).
        _ => None,
    }
}

/// Whether `sender_id`, or `username` for an `@name` entry, is in `allow_from`. Only the
/// platform's username field is matched by `@name`, never a display or first name.
pub fn listed(allow_from: &[String], sender_id: &str, username: Option<&str>) -> bool {
    allow_from.iter().any(|a| match a.strip_prefix('@') {
        Some(name) => username.is_some_and(|u| !u.is_empty() && u.eq_ignore_ascii_case(name)),
        None => a == sender_id,
    })
}

pub async fn check(
    store: &Store,
    cfg: &Config,
    msg: &InboundMessage,
) -> Result<Verdict, StoreError> {
    let Some(p) = policy(cfg, &msg.origin.channel) else {
        return Ok(Verdict::Allow);
    };
    let is_listed = listed(p.allow_from, &msg.sender_id, msg.sender_username.as_deref());
    match msg.origin.kind {
        ChatKind::Group => {
            if !p.allow_from.is_empty() && !is_listed {
                return Ok(Verdict::Ignore("sender not in allowFrom"));
            }
            let mut require_mention = p.require_mention;
            if msg.origin.channel == "discord" {
                // Guild/channel allowlist; the guild id travels as the origin's account.
                let guilds = &cfg.channels.discord.guilds;
                let guild = msg.origin.account.as_deref().and_then(|g| guilds.get(g));
                if !guilds.is_empty() && guild.is_none() {
                    return Ok(Verdict::Ignore("guild not in channels.discord.guilds"));
                }
                if let Some(g) = guild {
                    if !g.channels.is_empty() && !g.channels.contains(&msg.origin.chat_id) {
                        return Ok(Verdict::Ignore("channel not in the guild's channels"));
                    }
                    require_mention = g.require_mention;
                }
            }
            if require_mention && !msg.addressed {
                return Ok(Verdict::Ignore("group message not addressed to the bot"));
            }
            Ok(Verdict::Allow)
        }
        ChatKind::Direct => {
            if is_listed {
                return Ok(Verdict::Allow);
            }
            match p.dm_policy {
                DmPolicy::Open => Ok(Verdict::Allow),
                DmPolicy::Allowlist => Ok(Verdict::Ignore("sender not in allowFrom")),
                DmPolicy::Pairing => match store.pairing_for(&msg.origin.channel, &msg.sender_id, msg.sender_name.as_deref()).await? {
                    Pairing::Approved => Ok(Verdict::Allow),
                    Pairing::Pending { code, notify: true } => Ok(Verdict::Pairing(format!(
                        "Hi! This bot only talks to people its owner approved. Your pairing code is {code}.\n\
                         Ask the owner to run: switchboard pairing approve {} {code}",
                        msg.origin.channel
                    ))),
                    Pairing::Pending { notify: false, .. } => Ok(Verdict::Ignore("sender is waiting for pairing approval")),
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_from_matches_ids_and_usernames() {
        let allow = vec!["42".to_string(), "@Ann".to_string()];
        assert!(listed(&allow, "42", None));
        assert!(listed(&allow, "7", Some("ann")));
        assert!(!listed(&allow, "7", Some("bob")));
        assert!(!listed(&allow, "7", None));
        assert!(
            !listed(&allow, "@Ann", None),
            "an id never matches an @name entry"
        );
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::listed;

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// A sender with no username is let in by its id alone, whatever the list holds.
        #[test]
        fn without_a_username_only_the_id_matches(
            allow in proptest::collection::vec(".{0,12}", 0..6),
            id in ".{0,12}",
        ) {
            prop_assert_eq!(
                listed(&allow, &id, None),
                allow.iter().any(|a| !a.starts_with('@') && *a == id)
            );
        }
    }
}
