//! Inbound routing: allowlist, slash commands (answered at once, even when the session is
//! busy), then agent + session key resolution and submission to the queue.

pub mod access;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use switchboard_channels::{ChatKind, InboundMessage, Origin};

use crate::agent::dispatch;
use crate::commands;
use crate::config::{AgentEntry, Config};
use crate::runtime::Runtime;

/// Agent id used when the config lists no agents.
pub const DEFAULT_AGENT: &str = "main";

/// The agent that takes messages by default: the one marked `default`, else the first
/// listed, else `main`.
pub fn default_agent_id(cfg: &Config) -> String {
    cfg.agents
        .list
        .iter()
        .find(|a| a.default)
        .or(cfg.agents.list.first())
        .map(|a| a.id.clone())
        .unwrap_or_else(|| DEFAULT_AGENT.to_string())
}

pub fn agent_entry(cfg: &Config, id: &str) -> Option<AgentEntry> {
    cfg.agents.list.iter().find(|a| a.id == id).cloned()
}

/// The workspace folder of an agent: its own, else the default, else `<state>/workspace`.
pub fn workspace_for(cfg: &Config, agent: Option<&AgentEntry>, state_dir: &Path) -> PathBuf {
    agent
        .and_then(|a| a.workspace.clone())
        .or_else(|| cfg.agents.defaults.workspace.clone())
        .unwrap_or_else(|| state_dir.join("workspace"))
}

/// Session key of a chat (SPEC §4).
pub fn session_key(agent_id: &str, origin: &Origin) -> String {
    match origin.kind {
        ChatKind::Direct => format!("agent:{agent_id}:main"),
        ChatKind::Group => {
            let mut k = format!(
                "agent:{agent_id}:{}:group:{}",
                origin.channel, origin.chat_id
            );
            if let Some(t) = &origin.thread_id {
                k.push_str(&format!(":thread:{t}"));
            }
            k
        }
    }
}

/// Handle one inbound message end to end. Errors are answered to the sender.
pub async fn handle_inbound(rt: &Arc<Runtime>, msg: InboundMessage) {
    let cfg = rt.config();
    let agent_id = default_agent_id(&cfg);
    let key = session_key(&agent_id, &msg.origin);
    match access::check(&rt.store, &cfg, &msg).await {
        Ok(access::Verdict::Allow) => {}
        Ok(access::Verdict::Ignore(why)) => {
            tracing::info!(channel = %msg.origin.channel, sender = %msg.sender_id, reason = why, "inbound message ignored");
            return;
        }
        Ok(access::Verdict::Pairing(text)) => {
            tracing::info!(channel = %msg.origin.channel, sender = %msg.sender_id, "unknown sender: pairing code sent");
            reply(rt, &msg.origin, &text).await;
            return;
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot check access; dropping the message");
            return;
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
                return;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot record the inbound message; dropping it");
                return;
            }
        }
    }
    if let Some(cmd) = commands::parse(&msg.text) {
        // `/subagents send` waits for the child's answer: run it aside so this chat's
        // other messages (and every other chat) are not held up.
        let slow = matches!(
            cmd,
            commands::Command::Subagents(commands::subagents::SubCommand::Send { .. })
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
        return;
    }
    let submitted = match &msg.message_id {
        Some(id) => dispatch::submit_message_once(rt, &key, &agent_id, &msg.origin, &msg.sender_id, &msg.text, id)
            .await
            .map(|s| {
                if s.is_none() {
                    tracing::info!(channel = %msg.origin.channel, message_id = %id, "duplicate inbound message ignored");
                }
            }),
        None => dispatch::submit_message(rt, &key, &agent_id, &msg.origin, &msg.sender_id, &msg.text).await.map(|_| ()),
    };
    if let Err(e) = submitted {
        tracing::error!(session = %key, error = %e, "cannot accept message");
        reply(
            rt,
            &msg.origin,
            &format!("⚠️ Could not accept your message: {e}"),
        )
        .await;
    }
}

/// Queue a direct answer (command output, error) to `origin` through the outbox.
pub async fn reply(rt: &Runtime, origin: &Origin, text: &str) {
    let key = format!("reply:{}", uuid::Uuid::new_v4());
    match rt.store.enqueue_outbox(&key, origin, text).await {
        Ok(_) => rt.outbox_wake.notify_one(),
        Err(e) => tracing::error!(error = %e, "cannot queue a reply"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_keys_follow_the_spec() {
        let dm = Origin::webchat("main", ChatKind::Direct);
        assert_eq!(session_key("main", &dm), "agent:main:main");
        let mut g = Origin::webchat("team", ChatKind::Group);
        g.thread_id = Some("7".into());
        assert_eq!(
            session_key("ops", &g),
            "agent:ops:webchat:group:team:thread:7"
        );
    }
}
