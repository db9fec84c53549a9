//! The API's small answers as typed views (lists around the row views of `views.rs`, what
//! a post, a stop or a cron action answers), written by `error::Json` with their keys in
//! alphabetical order, as the API has always answered.

use serde::Serialize;

use super::views::{SessionView, SubagentView};
use crate::agent::dispatch::Submitted;
use crate::events::RunEnded;

/// `GET /api/sessions`.
#[derive(Debug, Serialize)]
pub struct SessionList {
    pub sessions: Vec<SessionView>,
}

/// `GET /api/subagents`.
#[derive(Debug, Serialize)]
pub struct SubagentList {
    pub subagents: Vec<SubagentView>,
}

/// `POST /api/sessions/{key}/messages`: still waiting (`accepted`, `pending`), or the end
/// of the run that took the message.
#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessageAnswer {
    Waiting {
        status: &'static str,
        #[serde(rename = "inboxId")]
        inbox_id: i64,
        #[serde(rename = "runId")]
        run_id: Option<String>,
    },
    Ended {
        status: &'static str,
        #[serde(rename = "inboxId")]
        inbox_id: i64,
        #[serde(rename = "runId")]
        run_id: Option<String>,
        reply: Option<String>,
        error: Option<String>,
    },
}

impl MessageAnswer {
    /// The message is stored; its run has not ended (yet).
    pub fn waiting(status: &'static str, sub: &Submitted) -> MessageAnswer {
        MessageAnswer::Waiting {
            status,
            inbox_id: sub.inbox_id,
            run_id: sub.run_id.clone(),
        }
    }

    /// The run that took message `inbox_id` ended.
    pub fn ended(inbox_id: i64, end: &RunEnded) -> MessageAnswer {
        MessageAnswer::Ended {
            status: end.status.as_str(),
            inbox_id,
            run_id: end.run_id.clone(),
            reply: end.reply.clone(),
            error: end.error.clone(),
        }
    }
}

/// `POST /api/subagents/{id}/stop`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedRun {
    pub run_id: String,
    pub stopped: bool,
}

/// `POST /api/sessions/{key}/subagents/stop`: how many runs of the tree were stopped.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedTree {
    pub session_key: String,
    pub stopped: usize,
}

/// `GET /api/mcp`.
#[derive(Debug, Serialize)]
pub struct McpList {
    pub servers: Vec<McpServerView>,
}

/// A configured MCP server: running (with its state, tools and restarts) or disabled.
#[derive(Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum McpServerView {
    Running {
        name: String,
        transport: &'static str,
        state: &'static str,
        tools: Vec<String>,
        restarts: u64,
        /// Scrubbed: an MCP server's error may quote its URL or headers.
        #[serde(rename = "lastError")]
        last_error: Option<String>,
        pid: Option<u32>,
    },
    Disabled {
        name: String,
        state: &'static str,
        tools: [String; 0],
        restarts: u64,
    },
}

/// `GET /api/cron`.
#[derive(Debug, Serialize)]
pub struct CronList {
    pub jobs: Vec<super::views::CronJobView>,
}

/// `POST /api/cron/{id}/run`: the job's run is queued on `sessionKey`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CronStarted {
    pub id: String,
    pub status: &'static str,
    pub session_key: String,
}

/// `POST /api/cron/{id}/remove`.
#[derive(Debug, Serialize)]
pub struct CronRemoved {
    pub id: String,
    pub status: &'static str,
}

/// `POST /api/webchat/uploads`: the stored file's id and size in bytes.
#[derive(Debug, Serialize)]
pub struct Uploaded {
    pub id: String,
    pub size: u64,
}
