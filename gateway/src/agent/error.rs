//! What can go wrong on the agent side of a message (taking it, running it), apart from
//! the store failing: broken promises between the parts, named as such.

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A message without a platform id can never be a duplicate; the store said it was.
    #[error("a message without an id was reported as a duplicate")]
    DuplicateWithoutId,
}
