//! A session's choices (`/model`, `/think`), the same on both engines.

use super::{sql, Sql};
use crate::choices::Choice;

/// The choices of a key's active session: key.
pub(crate) const GET: Sql = sql!(
    "SELECT model_override, thinking_override FROM sessions
     WHERE key = $1 AND status = 'active'"
);

/// Set the model choice: value, now, key.
const SET_MODEL: Sql = sql!(
    "UPDATE sessions SET model_override = $1, updated_at = $2
     WHERE key = $3 AND status = 'active'"
);

/// Set the thinking choice: value, now, key.
const SET_THINKING: Sql = sql!(
    "UPDATE sessions SET thinking_override = $1, updated_at = $2
     WHERE key = $3 AND status = 'active'"
);

/// Set `choice` on a key's active session: value, now, key.
pub(crate) fn set(choice: Choice) -> Sql {
    match choice {
        Choice::Model => SET_MODEL,
        Choice::Thinking => SET_THINKING,
    }
}
