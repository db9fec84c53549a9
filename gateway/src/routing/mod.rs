//! Inbound routing: allowlist, slash commands (answered at once, even when the session is
//! busy), then agent + session key resolution and submission to the queue.

pub mod access;
pub mod press;

use std::sync::Arc;

use switchboard_channels::{ChatKind, InboundMessage, Origin};

use crate::agent::{dispatch, AgentError};
use crate::commands;
use crate::config::{Config, DmScope};
use crate::runtime::Runtime;

use crate::session_key::{KeyKind, SessionKey};

pub use crate::config::{agent_entry, default_agent_id, workspace_for, DEFAULT_AGENT};

/// Session key of a chat (docs/decisions.md, on queue modes; README, Security, on sessions): a
/// group's key names its chat (and thread); a direct message's key follows
/// `session.dmScope`.
pub fn session_key(scope: DmScope, agent_id: &str, origin: &Origin, sender_id: &str) -> String {
    let kind = match origin.kind {
        ChatKind::Direct => match scope {
            DmScope::Main => KeyKind::Main,
            DmScope::PerPeer => KeyKind::Dm {
                peer: sender_id.into(),
            },
            DmScope::PerChannelPeer => KeyKind::ChannelDm {
                channel: origin.channel.clone(),
                peer: sender_id.into(),
            },
        },
        ChatKind::Group => KeyKind::Group {
            channel: origin.channel.clone(),
            chat: origin.chat_id.clone(),
            thread: origin.thread_id.clone(),
        },
    };
    SessionKey::new(agent_id, kind).to_string()
}

/// What became of an inbound message: whether the adapter may confirm it to its platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// Committed (queued, answered, or a duplicate of one that was).
    Taken,
    /// Deliberately dropped (not allowed, not addressed): confirm it, it is not wanted.
    Dropped,
    /// Not stored (a store error): do not confirm it, so the platform delivers it again.
    Failed,
}

impl Handled {
    /// Whether the adapter may acknowledge the message to its platform.
    pub fn ack(self) -> bool {
        self != Handled::Failed
    }
}

/// Handle one inbound message end to end. Errors are answered to the sender where that
/// is possible; a message that could not be stored is reported as [`Handled::Failed`].
pub async fn handle_inbound(rt: &Arc<Runtime>, msg: InboundMessage) -> Handled {
    let cfg = rt.config();
    let agent_id = default_agent_id(&cfg);
    let key = session_key(cfg.session.dm_scope, &agent_id, &msg.origin, &msg.sender_id);
    match access::check(&rt.store, &cfg, &msg).await {
        Ok(access::Verdict::Allow) => {}
        Ok(access::Verdict::Ignore(why)) => {
            tracing::info!(channel = %msg.origin.channel, sender = %msg.sender_id, reason = why, "inbound message ignored");
            return Handled::Dropped;
        }
        Ok(access::Verdict::Pairing(text)) => {
            tracing::info!(channel = %msg.origin.channel, sender = %msg.sender_id, "unknown sender: pairing code sent");
            return if reply(rt, &msg.origin, &text).await {
                Handled::Taken
            } else {
                Handled::Failed
            };
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot check access; the message is left to be delivered again");
            return Handled::Failed;
        }
    }
    // A platform redelivery (e.g. after a restart) of a command already taken. (Chat
    // messages are deduplicated in the same transaction that queues them.)
    let is_command = commands::parse(&msg.text).is_some();
    if let Some(id) = msg.message_id.as_ref().filter(|_| is_command) {
        match rt.store.mark_inbound_seen(&msg.origin.channel, id).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::info!(channel = %msg.origin.channel, message_id = %id, "duplicate inbound message ignored");
                return Handled::Taken;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot record the inbound message; it is left to be delivered again");
                return Handled::Failed;
            }
        }
    }
    if let Some(cmd) = commands::parse(&msg.text) {
        if matches!(cmd, commands::Command::Approve(..)) && !commands::approve::is_owner(&cfg, &msg)
        {
            tracing::info!(channel = %msg.origin.channel, chat = %msg.origin.chat_id, sender = %msg.sender_id, "/approve by a sender who is not an owner: refused");
            return if reply(rt, &msg.origin, commands::approve::NOT_OWNER).await {
                Handled::Taken
            } else {
                Handled::Failed
            };
        }
        // `/subagents send` waits for the child's answer: run it aside so this chat's
        // other messages (and every other chat) are not held up.
        // `/compact` waits for the model's summary likewise.
        let slow = matches!(
            cmd,
            commands::Command::Subagents(commands::subagents::SubCommand::Send { .. })
                | commands::Command::Compact(_)
        );
        let rt2 = rt.clone();
        let origin = msg.origin.clone();
        let work = async move {
            let answer = commands::execute(&rt2, &key, &agent_id, &origin, cmd).await;
            reply(&rt2, &origin, &answer).await;
        };
        if slow {
            rt.tasks.spawn(work);
        } else {
            work.await;
        }
        return Handled::Taken;
    }
    // Files are taken into the agent's inbox and noted in the text (docs/media.md).
    let received = crate::media::receive::receive(rt, &cfg, &agent_id, &msg).await;
    for refusal in &received.refusals {
        reply(rt, &msg.origin, refusal).await;
    }
    if received.text.trim().is_empty() {
        // A message with neither text nor any file taken: its sender was told why.
        return Handled::Taken;
    }
    let submission = dispatch::Submission {
        session_key: &key,
        agent_id: &agent_id,
        origin: &msg.origin,
        sender_id: &msg.sender_id,
        text: &received.text,
    };
    let submitted = match &msg.message_id {
        Some(id) => dispatch::submit_message_once(rt, &submission, id)
            .await
            .map_err(AgentError::from)
            .map(|s| {
                if s.is_none() {
                    tracing::info!(channel = %msg.origin.channel, message_id = %id, "duplicate inbound message ignored");
                }
            }),
        None => dispatch::submit_message(rt, &submission).await.map(|_| ()),
    };
    match submitted {
        Ok(()) => Handled::Taken,
        Err(e) => {
            tracing::error!(session = %key, error = %e, "cannot accept message");
            reply(
                rt,
                &msg.origin,
                &format!("⚠️ Could not accept your message: {e}"),
            )
            .await;
            // Not acknowledged: a platform that redelivers (Telegram) brings it again.
            Handled::Failed
        }
    }
}

/// Queue a direct answer (command output, error) to `origin` through the outbox; false if
/// it could not be stored.
pub async fn reply(rt: &Runtime, origin: &Origin, text: &str) -> bool {
    let key = format!("reply:{}", uuid::Uuid::new_v4());
    match rt.store.enqueue_outbox(&key, origin, text).await {
        Ok(_) => {
            rt.tasks.outbox_wake.notify_one();
            true
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot queue a reply");
            false
        }
    }
}

/// With `session.dmScope: "main"` every direct message of an agent shares one session: a
/// warning naming how many allowed DM senders would share it, when that is more than one
/// (or anyone may write). `approved` are the senders let in by pairing, as
/// `(channel, sender id)`.
pub fn shared_dm_warning(cfg: &Config, approved: &[(String, String)]) -> Option<String> {
    if cfg.session.dm_scope != DmScope::Main {
        return None;
    }
    let mut senders = std::collections::BTreeSet::new();
    let mut open = Vec::new();
    for dm in cfg.channels.dm_access() {
        let (channel, allow_from, policy) = (dm.channel, dm.allow_from, dm.dm_policy);
        if policy == crate::config::DmPolicy::Disabled {
            continue;
        }
        if policy == crate::config::DmPolicy::Open || allow_from.iter().any(|a| a == "*") {
            open.push(channel);
        }
        senders.extend(
            allow_from
                .iter()
                .filter(|a| *a != "*")
                .map(|a| (channel, a.as_str())),
        );
        senders.extend(
            approved
                .iter()
                .filter(|(c, _)| c == channel)
                .map(|(_, s)| (channel, s.as_str())),
        );
    }
    let main = SessionKey::main(default_agent_id(cfg));
    if !open.is_empty() {
        return Some(format!(
            "anyone may send direct messages on {} and every DM shares the session {main} \
             (session.dmScope = \"main\"): they can read each other's conversation; set session.dmScope \
             to \"per-peer\" or \"per-channel-peer\"",
            open.join(", ")
        ));
    }
    (senders.len() > 1).then(|| {
        format!(
            "{} allowed DM senders share the session {main} (session.dmScope = \"main\"): \
             each sees the others' conversation; set session.dmScope to \"per-peer\" or \"per-channel-peer\" \
             to give each their own",
            senders.len()
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod turn_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(v: serde_json::Value) -> Config {
        crate::config::parse_config(&v.to_string(), &|_| None).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_shared_dm_session_is_warned_about() {
        let one = cfg(
            serde_json::json!({"channels": {"telegram": {"enabled": true, "botToken": "t", "allowFrom": [1]}}}),
        );
        assert_eq!(shared_dm_warning(&one, &[]), None);
        let paired = [("telegram".to_string(), "2".to_string())];
        let warning = shared_dm_warning(&one, &paired).unwrap_or_default();
        assert!(
            warning.starts_with("2 allowed DM senders share the session agent:main:main"),
            "{warning}"
        );
        let open = cfg(
            serde_json::json!({"channels": {"discord": {"enabled": true, "token": "t", "dmPolicy": "open"}}}),
        );
        assert!(shared_dm_warning(&open, &[])
            .is_some_and(|w| w.starts_with("anyone may send direct messages on discord")));
        let scoped = cfg(
            serde_json::json!({"session": {"dmScope": "per-peer"}, "channels": {"discord": {"enabled": true, "token": "t", "dmPolicy": "open"}}}),
        );
        assert_eq!(shared_dm_warning(&scoped, &paired), None);
    }

    #[test]
    fn session_keys_follow_the_spec() {
        let dm = Origin::webchat("main", ChatKind::Direct);
        let key = |scope, origin: &Origin| session_key(scope, "main", origin, "42");
        assert_eq!(key(DmScope::Main, &dm), "agent:main:main");
        assert_eq!(key(DmScope::PerPeer, &dm), "agent:main:dm:42");
        assert_eq!(
            key(DmScope::PerChannelPeer, &dm),
            "agent:main:webchat:dm:42"
        );
        let mut g = Origin::webchat("team", ChatKind::Group);
        g.thread_id = Some("7".into());
        for scope in [DmScope::Main, DmScope::PerPeer, DmScope::PerChannelPeer] {
            assert_eq!(
                session_key(scope, "ops", &g, "42"),
                "agent:ops:webchat:group:team:thread:7"
            );
        }
    }
}
