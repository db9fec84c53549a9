//! Lines edited in place: a short status message an adapter posts once and then rewrites
//! (a sub-agent's progress line). [`Channel::post_line`](crate::Channel::post_line) answers
//! the platform's id of the message, which the caller keeps (durably, if it must survive a
//! restart) and hands to [`Channel::edit_line`](crate::Channel::edit_line). Adapters know
//! lines, never what they report on.

use crate::ChannelError;

/// Why posting or editing a line failed.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// This channel cannot edit messages: the caller should stop trying.
    #[error("this channel does not edit messages")]
    Unsupported,
    /// The message to edit is gone (deleted by a user, or not the bot's): post a new one.
    #[error("the message to edit is gone: {0}")]
    Gone(String),
    /// Any other failure; `RateLimited` carries the platform's delay.
    #[error(transparent)]
    Channel(#[from] ChannelError),
}
