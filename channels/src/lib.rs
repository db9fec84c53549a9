//! Chat channels for Switchboard: the [`Channel`] trait every adapter implements, the
//! message types that cross the channel boundary, text splitting, and the built-in web chat.
//!
//! Architecture invariant: this crate knows nothing about agents, sessions, the store or
//! the HTTP server. The gateway depends on it, never the other way round.
#![forbid(unsafe_code)]

mod action;
pub mod backoff;
mod channel;
pub mod discord;
pub mod ids;
pub mod line;
pub mod media;
mod menu;
mod message;
#[cfg(test)]
mod proptest_cases;
mod secret;
pub mod section;
pub mod slack;
pub mod split;
pub mod telegram;
pub mod webchat;

pub use action::{renderable, Action, Press, PressAnswer, MAX_ACTIONS, MAX_ACTION_ID, MAX_LABEL};
pub use channel::{
    send_parts, Capabilities, Channel, ChannelError, DeliveryProgress, Inbound, InboundSink,
    MemoryProgress,
};
pub use line::LineError;
pub use media::{FileKind, MediaError, MediaKind, MediaRef, OutboundFile};
pub use menu::{command_in, MenuCommand, MenuOption};
pub use message::{ChatKind, InboundMessage, Origin, OutboundMessage};
pub use secret::secret_eq;
