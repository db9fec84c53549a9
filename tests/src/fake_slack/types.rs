//! What the fake Slack records and what tests inject: posted, updated and ephemeral
//! messages, uploads, acks, injected failures, and the users tests speak as.

use serde_json::Value;

/// The bot's user id (what `auth.test` answers, and `<@UBOT>` mentions name).
pub const BOT_USER: &str = "UBOT0001";
/// The bot's bot id (`bot_id` on its own messages).
pub const BOT_ID: &str = "BBOT0001";
/// The app id in `hello` and every payload.
pub const APP_ID: &str = "AAPP0001";
/// The workspace id.
pub const TEAM_ID: &str = "TTEAM001";
/// Slack truncates `text` past this many characters (`msg_too_long` beyond).
pub const MAX_TEXT_CHARS: usize = 40_000;
/// A section block's text, at most.
pub const MAX_SECTION_CHARS: usize = 3000;
/// Blocks in one message, at most.
pub const MAX_BLOCKS: usize = 50;
/// A button's label, at most (plain_text).
pub const MAX_BUTTON_LABEL: usize = 75;
/// A button's `action_id` / `value`, at most.
pub const MAX_ACTION_ID: usize = 255;

/// A person in the workspace, as tests speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SUser {
    pub id: String,
    pub name: String,
}

impl SUser {
    pub fn new(id: &str, name: &str) -> SUser {
        SUser {
            id: id.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// A message the bot posted with `chat.postMessage` (its latest text after updates).
#[derive(Debug, Clone, PartialEq)]
pub struct Posted {
    pub channel: String,
    pub ts: String,
    pub thread_ts: Option<String>,
    pub text: String,
    /// The `blocks` given, if any.
    pub blocks: Option<Value>,
}

impl Posted {
    /// `(label, action_id)` of every button in the message's blocks.
    pub fn buttons(&self) -> Vec<(String, String)> {
        buttons(self.blocks.as_ref())
    }

    /// The text people see: the section blocks' texts when there are blocks, else `text`.
    pub fn shown(&self) -> String {
        let sections: Vec<&str> = self
            .blocks
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "section")
            .filter_map(|b| b["text"]["text"].as_str())
            .collect();
        if sections.is_empty() {
            self.text.clone()
        } else {
            sections.join("\n")
        }
    }
}

pub(super) fn buttons(blocks: Option<&Value>) -> Vec<(String, String)> {
    blocks
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "actions")
        .filter_map(|b| b["elements"].as_array())
        .flatten()
        .filter(|e| e["type"] == "button")
        .map(|e| {
            (
                e["text"]["text"].as_str().unwrap_or_default().to_owned(),
                e["action_id"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// One `chat.update` the fake accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub channel: String,
    pub ts: String,
    pub text: String,
    pub blocks: Option<Value>,
}

/// One `chat.postEphemeral` the fake accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ephemeral {
    pub channel: String,
    pub user: String,
    pub text: String,
}

/// A file shared by `files.completeUploadExternal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub file_id: String,
    pub filename: String,
    pub title: Option<String>,
    pub channel: String,
    pub thread_ts: Option<String>,
    pub initial_comment: Option<String>,
    pub bytes: Vec<u8>,
}

/// A failure to play for the next call of a Web API method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// HTTP 429 with `Retry-After: secs` (and `{ok:false,error:"ratelimited"}`); a call of
    /// the same method before that many seconds is a violation.
    RateLimited(u64),
    /// HTTP 200 `{ok:false,error}` (e.g. `channel_not_found`).
    Error(String),
    /// This HTTP status (5xx), body `{ok:false,error:"internal_error"}`.
    Status(u16),
}

/// One Web API call, in order of arrival.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub method: String,
    /// What the fake answered: `ok`, or the error (`ratelimited`, `invalid_auth`, …).
    pub outcome: String,
}

/// An envelope the fake delivered over Socket Mode, and its acks.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub envelope_id: String,
    /// `events_api`, `slash_commands` or `interactive`.
    pub kind: String,
    pub payload: Value,
    /// How many times it was written to a connection.
    pub deliveries: u32,
    /// How many acks came for it.
    pub acks: u32,
}
