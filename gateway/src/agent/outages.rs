//! Which models are in an outage now, and which chats were told: the in-memory state
//! behind model fallbacks (docs/models.md, "Fallbacks"). Owned by the runtime
//! (`Runtime::outages`), one per process: after a restart every model is tried again.
//!
//! A model whose call fails with an outage (`ProviderError::is_outage`, after its
//! retries) is passed over for `models.outageCooldown`; after that the next turn probes
//! it once, without retries: an answer ends the outage, a failure starts another
//! cool-down. Each chat hears of an outage once (when it is first served by a fallback
//! because of it), and hears that it ended when its own turn is the one that finds the
//! model answering again.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Most models with an outage remembered (the references come from the config, so this
/// is never reached in practice; past it the oldest is forgotten).
const MAX_MODELS: usize = 256;
/// Most chats remembered per outage as told (past it, a chat may be told twice).
const MAX_TOLD: usize = 4096;

#[derive(Debug)]
struct Outage {
    since: Instant,
    /// Passed over until then; probed after.
    until: Instant,
    /// Why, for the chat: `HTTP 503`, `timed out`, ….
    reason: String,
    /// Session keys told of this outage.
    told: BTreeSet<String>,
}

/// The models in an outage, by `provider/model`.
#[derive(Debug, Default)]
pub struct Outages {
    down: Mutex<HashMap<String, Outage>>,
}

/// What a model's answer or failure means for the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tell {
    /// Nothing to say.
    Nothing,
    /// Say the model is failing (the first time this chat is served around it).
    Failing,
    /// Say the model answers again (it ended an outage this chat was told of).
    Recovered,
}

impl Outages {
    /// Whether `reference` is passed over now (in an outage, inside its cool-down).
    pub fn passed_over(&self, reference: &str, now: Instant) -> bool {
        self.down
            .lock()
            .get(reference)
            .is_some_and(|o| now < o.until)
    }

    /// Whether `reference` is in an outage (in its cool-down or waiting for its probe).
    pub fn is_down(&self, reference: &str) -> bool {
        self.down.lock().contains_key(reference)
    }

    /// `reference` failed with an outage at `now`: passed over until `now + cooldown`.
    /// [`Tell::Failing`] when `session` was not told of this outage yet.
    pub fn failed(
        &self,
        reference: &str,
        reason: &str,
        session: &str,
        cooldown: Duration,
        now: Instant,
    ) -> Tell {
        let mut down = self.down.lock();
        if !down.contains_key(reference) && down.len() >= MAX_MODELS {
            if let Some(oldest) = down
                .iter()
                .min_by_key(|(_, o)| o.since)
                .map(|(k, _)| k.clone())
            {
                down.remove(&oldest);
            }
        }
        let outage = down.entry(reference.to_string()).or_insert_with(|| Outage {
            since: now,
            until: now,
            reason: String::new(),
            told: BTreeSet::new(),
        });
        outage.until = now + cooldown;
        outage.reason = reason.chars().take(64).collect();
        tell_once(outage, session)
    }

    /// `session`'s turn passed `reference` over: the outage's reason, when `session` was
    /// not told of it yet (it is now).
    pub fn passed_by(&self, reference: &str, session: &str) -> Option<String> {
        let mut down = self.down.lock();
        let outage = down.get_mut(reference)?;
        (tell_once(outage, session) == Tell::Failing).then(|| outage.reason.clone())
    }

    /// `reference` answered: its outage, if any, is over. [`Tell::Recovered`] when
    /// `session` was told of it.
    pub fn answered(&self, reference: &str, session: &str) -> Tell {
        let mut down = self.down.lock();
        if !down.contains_key(reference) {
            return Tell::Nothing;
        }
        match down.remove(reference) {
            Some(o) if o.told.contains(session) => Tell::Recovered,
            _ => Tell::Nothing,
        }
    }
}

/// [`Tell::Failing`] the first time for `session`, and remembers it.
fn tell_once(outage: &mut Outage, session: &str) -> Tell {
    if outage.told.contains(session) {
        return Tell::Nothing;
    }
    if outage.told.len() < MAX_TOLD {
        outage.told.insert(session.to_string());
    }
    Tell::Failing
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a chat told twice of one outage, a model tried again inside its
    /// cool-down, a model never tried again, or a recovery said to a chat never told.
    #[tokio::test(start_paused = true)]
    async fn an_outage_is_told_once_per_chat_and_ends_when_the_model_answers() {
        let o = Outages::default();
        let cool = Duration::from_secs(60);
        let t0 = Instant::now();
        assert!(!o.passed_over("p/m", t0));
        assert_eq!(
            o.failed("p/m", "HTTP 503", "chat-a", cool, t0),
            Tell::Failing
        );
        assert!(o.passed_over("p/m", t0 + Duration::from_secs(59)));
        assert!(!o.passed_over("p/m", t0 + cool));
        // The probe after the cool-down fails: a new cool-down, nobody told again.
        assert_eq!(
            o.failed("p/m", "HTTP 503", "chat-a", cool, t0 + cool),
            Tell::Nothing
        );
        assert!(o.passed_over("p/m", t0 + cool + Duration::from_secs(1)));
        // Another chat served around it hears of it once.
        assert_eq!(
            o.failed("p/m", "HTTP 503", "chat-b", cool, t0 + cool),
            Tell::Failing
        );
        assert_eq!(o.passed_by("p/m", "chat-d"), Some("HTTP 503".into()));
        assert_eq!(o.passed_by("p/m", "chat-d"), None, "told once");
        assert!(o.is_down("p/m"));
        assert_eq!(
            o.answered("p/m", "chat-c"),
            Tell::Nothing,
            "chat-c was never told"
        );
        assert!(!o.is_down("p/m"));
        assert_eq!(o.answered("p/m", "chat-a"), Tell::Nothing, "already over");
        assert_eq!(
            o.failed("p/m", "HTTP 503", "chat-a", cool, t0),
            Tell::Failing,
            "a new outage"
        );
        assert_eq!(o.answered("p/m", "chat-a"), Tell::Recovered);
    }
}
