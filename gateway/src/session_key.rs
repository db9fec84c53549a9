//! Session keys as a typed value: parsed once ([`SessionKey::parse`], a clear error for
//! what is not a key), written once (`Display`), in the string forms the store has always
//! held, so stored data stays valid:
//!
//! | kind | form |
//! |---|---|
//! | main (DMs with `session.dmScope: "main"`, cron's main session) | `agent:<agent>:main` |
//! | DM per peer | `agent:<agent>:dm:<peer>` |
//! | DM per channel and peer | `agent:<agent>:<channel>:dm:<peer>` |
//! | group, channel, thread | `agent:<agent>:<channel>:group:<chat>[:thread:<thread>]` |
//! | sub-agent | `agent:<agent>:subagent:<id>` |
//! | a cron job's own session | `agent:<agent>:cron:<job>` |
//! | any other (HTTP API sessions: `POST /api/sessions/{key}/messages`) | `agent:<agent>:<rest>` |
//!
//! Every string `parse` accepts is written back unchanged (`parse(s)?.to_string() == s`),
//! and every key made from parts without `:` where the form puts one parses back to
//! itself.

use std::fmt;

/// A session key: the agent it belongs to and what kind of session it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionKey {
    agent: String,
    kind: KeyKind,
}

/// What kind of session a key names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// The agent's main session.
    Main,
    /// Direct messages of one peer, across channels.
    Dm { peer: String },
    /// Direct messages of one peer on one channel.
    ChannelDm { channel: String, peer: String },
    /// A group chat (a channel, a guild channel), or one thread of it.
    Group {
        channel: String,
        chat: String,
        thread: Option<String>,
    },
    /// A sub-agent's session.
    Subagent { id: String },
    /// A scheduled job's own session.
    Cron { job: String },
    /// Any other session (the HTTP API lets a client name its own): what follows
    /// `agent:<agent>:`.
    Other { rest: String },
}

/// A string that is not a session key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session key must look like agent:<agentId>:<rest> (e.g. agent:main:main), got {0:?}")]
pub struct SessionKeyError(String);

/// How much of a bad key an error quotes.
const QUOTED: usize = 80;

impl SessionKey {
    /// The key of `kind` for `agent`.
    pub fn new(agent: impl Into<String>, kind: KeyKind) -> SessionKey {
        SessionKey {
            agent: agent.into(),
            kind,
        }
    }

    /// `agent:<agent>:main`.
    pub fn main(agent: impl Into<String>) -> SessionKey {
        SessionKey::new(agent, KeyKind::Main)
    }

    /// `agent:<agent>:subagent:<id>`.
    pub fn subagent(agent: impl Into<String>, id: impl Into<String>) -> SessionKey {
        SessionKey::new(agent, KeyKind::Subagent { id: id.into() })
    }

    /// `agent:<agent>:cron:<job>`.
    pub fn cron(agent: impl Into<String>, job: impl Into<String>) -> SessionKey {
        SessionKey::new(agent, KeyKind::Cron { job: job.into() })
    }

    /// Parse a key: `agent:<agent>:<rest>` with neither part empty (the agent without
    /// `:`); the rest decides the kind (see the module doc), anything unrecognised is
    /// [`KeyKind::Other`].
    pub fn parse(s: &str) -> Result<SessionKey, SessionKeyError> {
        let bad = || SessionKeyError(s.chars().take(QUOTED).collect());
        let rest = s.strip_prefix("agent:").ok_or_else(bad)?;
        let (agent, rest) = rest.split_once(':').ok_or_else(bad)?;
        if agent.is_empty() || rest.is_empty() {
            return Err(bad());
        }
        Ok(SessionKey::new(agent, kind_of(rest)))
    }

    /// The agent the session belongs to.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    pub fn kind(&self) -> &KeyKind {
        &self.kind
    }

    /// Whether this is `agent`'s main session.
    pub fn is_main_of(&self, agent: &str) -> bool {
        self.kind == KeyKind::Main && self.agent == agent
    }

    pub fn is_subagent(&self) -> bool {
        matches!(self.kind, KeyKind::Subagent { .. })
    }

    /// The job whose own session this is.
    pub fn cron_job(&self) -> Option<&str> {
        match &self.kind {
            KeyKind::Cron { job } => Some(job),
            _ => None,
        }
    }
}

/// `(head, tail)` of `s` split at the first `sep`, both non-empty.
fn split_nonempty<'a>(s: &'a str, sep: &str) -> Option<(&'a str, &'a str)> {
    s.split_once(sep)
        .filter(|(head, tail)| !head.is_empty() && !tail.is_empty())
}

/// The kind of session `rest` (what follows `agent:<agent>:`) names.
fn kind_of(rest: &str) -> KeyKind {
    if rest == "main" {
        return KeyKind::Main;
    }
    let tail = |prefix: &str| rest.strip_prefix(prefix).filter(|t| !t.is_empty());
    if let Some(peer) = tail("dm:") {
        return KeyKind::Dm { peer: peer.into() };
    }
    if let Some(id) = tail("subagent:") {
        return KeyKind::Subagent { id: id.into() };
    }
    if let Some(job) = tail("cron:") {
        return KeyKind::Cron { job: job.into() };
    }
    if let Some((channel, after)) = split_nonempty(rest, ":") {
        if let Some(peer) = after.strip_prefix("dm:").filter(|p| !p.is_empty()) {
            return KeyKind::ChannelDm {
                channel: channel.into(),
                peer: peer.into(),
            };
        }
        if let Some(chat) = after.strip_prefix("group:").filter(|c| !c.is_empty()) {
            let (chat, thread) = match chat.rsplit_once(":thread:") {
                Some((c, t)) if !c.is_empty() && !t.is_empty() => (c, Some(t.to_string())),
                _ => (chat, None),
            };
            return KeyKind::Group {
                channel: channel.into(),
                chat: chat.into(),
                thread,
            };
        }
    }
    KeyKind::Other { rest: rest.into() }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent:{}:", self.agent)?;
        match &self.kind {
            KeyKind::Main => f.write_str("main"),
            KeyKind::Dm { peer } => write!(f, "dm:{peer}"),
            KeyKind::ChannelDm { channel, peer } => write!(f, "{channel}:dm:{peer}"),
            KeyKind::Group {
                channel,
                chat,
                thread,
            } => {
                write!(f, "{channel}:group:{chat}")?;
                match thread {
                    Some(t) => write!(f, ":thread:{t}"),
                    None => Ok(()),
                }
            }
            KeyKind::Subagent { id } => write!(f, "subagent:{id}"),
            KeyKind::Cron { job } => write!(f, "cron:{job}"),
            KeyKind::Other { rest } => f.write_str(rest),
        }
    }
}

impl std::str::FromStr for SessionKey {
    type Err = SessionKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SessionKey::parse(s)
    }
}

/// Sender id of a scheduled job's messages: `cron:<jobId>`.
pub const CRON_SENDER: &str = "cron:";

/// The job a run answers, if it is a job's turn: from the sender of the newest message
/// it took (`cron:<jobId>`), else from its session key (`agent:<id>:cron:<jobId>`).
pub fn cron_job_of(session_key: &str, newest_sender: Option<&str>) -> Option<String> {
    if let Some(id) = newest_sender.and_then(|s| s.strip_prefix(CRON_SENDER)) {
        return Some(id.to_string());
    }
    if newest_sender.is_some() {
        return None;
    }
    SessionKey::parse(session_key)
        .ok()?
        .cron_job()
        .map(str::to_string)
}

#[cfg(test)]
#[path = "session_key_tests.rs"]
mod tests;
