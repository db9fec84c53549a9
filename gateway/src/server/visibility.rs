//! Which live events a web chat socket may see (README, Security): its own session's, those
//! of the sub-agents spawned from it (and theirs), and deliveries to its own chat — never
//! another chat's, Telegram's, Discord's or an API session's.

use std::collections::HashSet;
use std::sync::Arc;

use switchboard_channels::webchat::CHANNEL_ID;

use crate::events::Scope;
use crate::store::{Store, StoreError};

/// Most sessions one socket follows (its own plus live descendants). Past it, new
/// children go unseen (logged) rather than growing the set without bound.
const MAX_SESSIONS: usize = 4096;
/// Children read per session when seeding from the store.
const SEED_PAGE: i64 = 1000;

pub struct Visibility {
    chat_id: String,
    own: Arc<str>,
    /// `own` and every live descendant.
    sessions: HashSet<Arc<str>>,
}

impl Visibility {
    /// A socket on web chat `chat_id`, whose session key is `own`.
    pub fn new(chat_id: &str, own: &str) -> Visibility {
        let own: Arc<str> = own.into();
        Visibility {
            chat_id: chat_id.to_string(),
            sessions: HashSet::from([own.clone()]),
            own,
        }
    }

    /// Adds the live (not archived) descendants recorded in the store. Call after
    /// subscribing to the bus: a spawn committed later arrives as an event.
    pub async fn seed(&mut self, store: &Store) -> Result<(), StoreError> {
        let mut queue = vec![self.own.clone()];
        while let Some(key) = queue.pop() {
            for row in store.subagents_of(&key, SEED_PAGE).await? {
                if row.archived_at.is_some() || self.sessions.len() >= MAX_SESSIONS {
                    continue;
                }
                let child: Arc<str> = row.child_session_key.into();
                if self.sessions.insert(child.clone()) {
                    queue.push(child);
                }
            }
        }
        Ok(())
    }

    /// Whether the socket may see an event of `scope`; learns and forgets children.
    pub fn admits(&mut self, scope: Scope<'_>) -> bool {
        match scope {
            Scope::Session(key) => self.sessions.contains(key),
            Scope::Spawn { requester, child } => {
                if !self.sessions.contains(requester) {
                    return false;
                }
                if self.sessions.len() < MAX_SESSIONS {
                    self.sessions.insert(child.into());
                } else {
                    tracing::debug!(chat = %self.chat_id, "web chat socket follows too many sub-agents; not following a new one");
                }
                true
            }
            Scope::Archived { child } => *child != *self.own && self.sessions.remove(child),
            Scope::Delivery { channel, chat_id } => {
                channel == CHANNEL_ID && chat_id == self.chat_id
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(k: &str) -> Scope<'_> {
        Scope::Session(k)
    }

    fn spawn<'a>(requester: &'a str, child: &'a str) -> Scope<'a> {
        Scope::Spawn { requester, child }
    }

    fn delivery<'a>(channel: &'a str, chat_id: &'a str) -> Scope<'a> {
        Scope::Delivery { channel, chat_id }
    }

    /// Catches: events fanned out unfiltered, or a socket not following its sub-agents
    /// (and theirs) once they are spawned, or still following them once archived.
    #[test]
    fn a_socket_follows_its_own_session_and_its_descendants_only() {
        let own = "agent:main:webchat:group:a";
        let mut v = Visibility::new("a", own);
        assert!(v.admits(session(own)));
        assert!(!v.admits(session("agent:main:webchat:group:b")));
        assert!(!v.admits(session("agent:main:main")));
        assert!(!v.admits(session("agent:main:api-x")));
        assert!(!v.admits(session("agent:main:subagent:1")));
        assert!(v.admits(spawn(own, "agent:main:subagent:1")));
        assert!(v.admits(session("agent:main:subagent:1")));
        assert!(v.admits(spawn("agent:main:subagent:1", "agent:main:subagent:2")));
        assert!(v.admits(session("agent:main:subagent:2")));
        assert!(!v.admits(spawn("agent:main:main", "agent:main:subagent:3")));
        assert!(!v.admits(session("agent:main:subagent:3")));
        let archived = Scope::Archived {
            child: "agent:main:subagent:1",
        };
        assert!(v.admits(archived));
        assert!(!v.admits(session("agent:main:subagent:1")));
        assert!(!v.admits(archived));
        assert!(!v.admits(Scope::Archived { child: own }));
        assert!(v.admits(session(own)));
    }

    /// Catches: a Telegram or Discord chat that happens to share the web chat's id
    /// seeing its deliveries, or the reverse.
    #[test]
    fn deliveries_are_seen_by_their_own_web_chat_only() {
        let mut v = Visibility::new("a", "agent:main:webchat:group:a");
        assert!(v.admits(delivery("webchat", "a")));
        assert!(!v.admits(delivery("webchat", "b")));
        assert!(!v.admits(delivery("telegram", "a")));
        assert!(!v.admits(delivery("discord", "a")));
    }

    #[test]
    fn the_followed_set_is_bounded() {
        let own = "agent:main:main";
        let mut v = Visibility::new("main", own);
        for i in 0..MAX_SESSIONS + 10 {
            assert!(v.admits(spawn(own, &format!("agent:main:subagent:{i}"))));
        }
        assert_eq!(v.sessions.len(), MAX_SESSIONS);
    }
}
