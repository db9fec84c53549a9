//! Transcript messages: roles, tool calls, a message to append and a stored one (both
//! engines).

use serde::{Deserialize, Serialize};

use super::decode::Columns;
use super::engine::engine_fns;
use super::from_json;
use super::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(s: &str) -> Result<Role> {
        match s {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            "tool" => Ok(Role::Tool),
            other => Err(super::StoreError::Corrupt(format!("unknown role {other}"))),
        }
    }
}

/// A tool call the model made, as stored on its assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    /// Raw JSON text of the arguments, exactly as the model sent it.
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub role: Role,
    pub content: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
}

impl NewMessage {
    pub fn user(text: impl Into<String>) -> Self {
        NewMessage {
            role: Role::User,
            content: text.into(),
            tool_calls: vec![],
            tool_call_id: None,
            tool_name: None,
        }
    }
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCallRecord>) -> Self {
        NewMessage {
            role: Role::Assistant,
            content: text.into(),
            tool_calls,
            tool_call_id: None,
            tool_name: None,
        }
    }
    pub fn tool(call: &ToolCallRecord, result: impl Into<String>) -> Self {
        NewMessage {
            role: Role::Tool,
            content: result.into(),
            tool_calls: vec![],
            tool_call_id: Some(call.id.clone()),
            tool_name: Some(call.name.clone()),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub seq: i64,
    pub session_id: String,
    pub run_id: Option<String>,
    pub role: Role,
    pub content: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub created_at: i64,
}

/// A `messages` row, from either engine.
pub(super) fn decode_message(r: &impl Columns) -> Result<MessageRow> {
    Ok(MessageRow {
        seq: r.int("seq")?,
        session_id: r.string("session_id")?,
        run_id: r.opt_string("run_id")?,
        role: Role::parse(r.text("role")?)?,
        content: r.string("content")?,
        tool_calls: r
            .opt_text("tool_calls")?
            .map(from_json)
            .transpose()?
            .unwrap_or_default(),
        tool_call_id: r.opt_string("tool_call_id")?,
        tool_name: r.opt_string("tool_name")?,
        created_at: r.int("created_at")?,
    })
}

engine_fns! {
    /// Append one message to a session's transcript; returns its sequence number.
    pub async fn append_message(&self, session_id: &str, run_id: Option<&str>, m: &NewMessage) -> Result<i64>;
    /// The whole transcript of a session, oldest first.
    pub async fn transcript(&self, session_id: &str) -> Result<Vec<MessageRow>>;
    /// The last `limit` messages of a session, oldest first.
    pub async fn transcript_tail(&self, session_id: &str, limit: i64) -> Result<Vec<MessageRow>>;
}
