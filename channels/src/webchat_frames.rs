//! The web chat's frame protocol: what the browser sends ([`ClientFrame`]) and what the
//! gateway sends it ([`ServerFrame`]), as JSON text frames.

use serde::{Deserialize, Serialize};

use crate::Action;

/// A frame the browser sends.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum ClientFrame {
    /// A chat message typed by the user, with the files it uploaded first (their ids;
    /// `text` may then be empty).
    Message {
        text: String,
        #[serde(default)]
        files: Vec<super::files::UploadRef>,
    },
    /// A press of button `action` under the message with key `key`.
    Press { action: String, key: String },
    /// Keep-alive; answered with `pong`. (A struct variant: a unit variant of a tagged
    /// enum would take unknown fields silently.)
    Ping {},
}

/// A frame the gateway sends to the browser.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ServerFrame {
    /// Sent once on connect: which chat this socket is attached to.
    Hello {
        chat_id: String,
    },
    /// Sent once on connect: the conversation so far (the newest messages of the chat's
    /// session, oldest first) and the session's key (its live events carry it). A later
    /// `message` whose `key` is in the history is the same message, delivered live.
    History {
        #[serde(rename = "sessionKey")]
        session_key: String,
        messages: Vec<HistoryMessage>,
    },
    /// A message from the assistant (reply, announce or command answer), with buttons
    /// under it when it has some (on its last part).
    Message {
        text: String,
        key: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        actions: Vec<Action>,
    },
    /// A message rewritten in place: a pressed message (its buttons gone) or a line
    /// edited in place (a sub-agent's progress), by the key of its `message` frame.
    Update {
        key: String,
        text: String,
    },
    /// For the presser alone: what became of a press (`alert`: a refusal or an error).
    Notice {
        text: String,
        alert: bool,
    },
    /// Typing indicator on/off.
    Typing {
        active: bool,
    },
    /// The client sent something the gateway could not accept.
    Error {
        error: String,
    },
    /// A live event (run started/step/tool/ended, sub-agent events).
    Event {
        event: serde_json::Value,
    },
    Pong,
    /// A file the agent sent, after its message's text (the same key): the browser
    /// downloads it from `GET /api/webchat/files/{id}` with the token.
    File {
        key: String,
        file: super::files::FileLink,
    },
}

/// One message of a [`ServerFrame::History`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryMessage {
    pub role: HistoryRole,
    pub text: String,
    /// The delivery key of the message (an assistant reply, an announce), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// A file the agent sent (as in the live `file` frame; `text` is empty): the page
    /// shows the same download button.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<super::files::FileLink>,
}

/// Who a history message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HistoryRole {
    User,
    Assistant,
    /// A sub-agent's announce.
    Announce,
    /// A tool call the assistant made (`text` is the tool's name).
    Tool,
}

impl ServerFrame {
    pub fn to_json(&self) -> String {
        // Serializing these plain enums cannot fail (no maps with non-string keys).
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{\"type\":\"error\"}"))
    }
}
