//! Plain message types that cross the channel boundary, in both directions.

use serde::{Deserialize, Serialize};

/// Whether a chat is a one-to-one conversation or a group/channel with several members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatKind {
    Direct,
    Group,
}

/// Where a message came from, and so where its answers go: channel, account, chat, thread.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Origin {
    /// Channel id: `webchat`, `telegram`, `discord`, or `api` for HTTP-API callers.
    pub channel: String,
    /// The bot account on that channel, when a channel hosts several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The chat (conversation) id on the channel.
    pub chat_id: String,
    /// Thread / forum topic inside the chat, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    pub kind: ChatKind,
    /// Adapter-specific way to answer this exact message (e.g. a Discord interaction), if
    /// it must not be answered as a plain chat message. Opaque to the gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_handle: Option<String>,
}

impl Origin {
    /// An origin for the built-in web chat.
    pub fn webchat(chat_id: impl Into<String>, kind: ChatKind) -> Self {
        Origin {
            channel: crate::webchat::CHANNEL_ID.to_string(),
            account: None,
            chat_id: chat_id.into(),
            thread_id: None,
            kind,
            reply_handle: None,
        }
    }
}

/// A message a person sent to the gateway through a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InboundMessage {
    pub origin: Origin,
    /// Stable id of the sender on the channel (user id).
    pub sender_id: String,
    /// Display name (or @username), when the channel gives one: for people to read, never
    /// for access decisions (anyone can set their display name to anything).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    /// The sender's platform username (without `@`), only from the platform's username
    /// field: what `@name` entries of an allowlist match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_username: Option<String>,
    pub text: String,
    /// The channel's own message id, when it has one (used for dedup and replies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Whether the message is addressed to the bot: always true in a direct chat; in a
    /// group, true when the bot is @mentioned, replied to, or sent a `/command@bot`. A
    /// button press is always addressed.
    #[serde(default)]
    pub addressed: bool,
    /// Set when this is not a message but a press of one of the gateway's buttons (then
    /// `text` is empty and `message_id` identifies the press, for dedupe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub press: Option<crate::Press>,
    /// Files the message carries (a photo, a document, a voice note, attachments), as
    /// references the adapter fetches on the gateway's request (`Channel::fetch_media`).
    /// A message with media may have empty `text` (no caption).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<crate::MediaRef>,
}

/// A message the gateway sends to a chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboundMessage {
    pub origin: Origin,
    pub text: String,
    /// A one-line footer (the announce's `Stats:` line), apart from the text: every
    /// adapter sends it last, on a line of its own, and never splits it unless it alone
    /// is longer than one platform message. Nothing in `text` is ever taken for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footer: Option<String>,
    /// Buttons under the message (under its last part when it is split): rendered by
    /// adapters whose platform has buttons, ignored by the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<crate::Action>,
    /// A file sent with the message (the text is its caption, or comes first when it is
    /// longer than the platform's caption).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<crate::OutboundFile>,
    /// Idempotency key of the outbox entry this message came from.
    pub key: String,
}
