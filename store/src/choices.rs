//! A session's own choices from the chat (`/model`, `/think`), kept on its active row
//! (both engines): read when a run is set up, written by the commands.

use super::engine::engine_fns;
use super::Result;

/// What the chat chose for its session; `None`: the agent's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionChoices {
    /// `provider/model`.
    pub model: Option<String>,
    /// A thinking level as written (`off`, `low`, …).
    pub thinking: Option<String>,
}

/// Which choice a write sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Model,
    Thinking,
}

engine_fns! {
    /// The choices of `key`'s active session (none when it has no active session).
    pub async fn session_choices(&self, key: &str) -> Result<SessionChoices>;
    /// Set (or with `None` clear) one choice of `key`'s active session, created for
    /// `agent_id` if there is none; committed before it returns.
    pub async fn set_session_choice(&self, key: &str, agent_id: &str, choice: Choice, value: Option<&str>) -> Result<()>;
}
