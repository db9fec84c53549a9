//! Session tools: `sessions_list`, `sessions_history`, `sessions_send`. What they see
//! follows `tools.sessions.visibility`: by default the run's own session and its
//! sub-agents' (a run acts for its own chat), else every session of its agent, or all.

use async_trait::async_trait;
use serde_json::{json, Value};
use switchboard_channels::{ChatKind, Origin};

use super::{args as arg, Tool, ToolContext, ToolError};
use crate::agent::dispatch;
use crate::agent::provider::ToolSpec;
use crate::config::SessionVisibility;
use crate::store::SessionRow;

/// Most sessions `sessions_list` returns.
const LIST_LIMIT: i64 = 50;
/// Most messages `sessions_history` returns.
const HISTORY_LIMIT: i64 = 100;
/// Longest session key accepted, in characters (real ones are well under 200).
const MAX_KEY_CHARS: usize = 512;
/// Longest message `sessions_send` passes on, in characters (as the HTTP API's `text`).
const MAX_MESSAGE_CHARS: usize = 32_000;
/// Sessions `sessions_list` reads to pick the visible ones from (`visibility: "agent"`).
const LIST_SCAN: i64 = 1_000;
/// Deepest chain of sub-agents followed up to the caller (spawn depth is capped lower).
const MAX_CHAIN: usize = 8;

/// Whether the session `key` of agent `agent_id` is visible to the calling run.
async fn visible(ctx: &ToolContext<'_>, key: &str, agent_id: &str) -> Result<bool, ToolError> {
    match ctx.cfg.tools.sessions.visibility {
        SessionVisibility::All => Ok(true),
        SessionVisibility::Agent => Ok(agent_id == ctx.agent_id),
        SessionVisibility::Own => {
            // Its own session, or a sub-agent spawned (at any depth) from it.
            let mut key = key.to_string();
            for _ in 0..=MAX_CHAIN {
                if key == ctx.session_key {
                    return Ok(true);
                }
                match ctx.rt.store.subagent_by_child(&key).await? {
                    Some(row) => key = row.requester_session_key,
                    None => return Ok(false),
                }
            }
            Ok(false)
        }
    }
}

/// The refusal of a session the run does not see (worded as for a missing one, so a
/// run learns nothing of other chats' sessions).
fn unseen(key: &str) -> ToolError {
    ToolError::Model(format!(
        "no session with key `{key}` that this run can see (tools.sessions.visibility)"
    ))
}

/// The sessions visible to the calling run, newest first, at most `limit`.
async fn visible_sessions(
    ctx: &ToolContext<'_>,
    archived: bool,
    limit: i64,
) -> Result<Vec<SessionRow>, ToolError> {
    let store = &ctx.rt.store;
    if ctx.cfg.tools.sessions.visibility == SessionVisibility::All {
        return Ok(store.list_sessions(archived, limit).await?);
    }
    let mut out = Vec::new();
    for s in store.list_sessions(archived, LIST_SCAN).await? {
        if out.len() as i64 >= limit {
            break;
        }
        if visible(ctx, &s.key, &s.agent_id).await? {
            out.push(s);
        }
    }
    Ok(out)
}

pub struct SessionsList;

#[async_trait]
impl Tool for SessionsList {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "sessions_list".into(),
            description: "List chat sessions (key, agent, status, last activity), newest first."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": LIST_LIMIT},
                    "includeArchived": {"type": "boolean"}
                }
            }),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let limit = arg::opt_clamped(&args, "limit", 20, 1, LIST_LIMIT)?;
        let archived = arg::opt_bool(&args, "includeArchived", false)?;
        let sessions = visible_sessions(ctx, archived, limit).await?;
        let list: Vec<Value> = sessions
            .iter()
            .map(|s| {
                json!({
                    "sessionKey": s.key,
                    "sessionId": s.id,
                    "agentId": s.agent_id,
                    "status": s.status.as_str(),
                    "updatedAt": s.updated_at,
                    "channel": s.origin.as_ref().map(|o| o.channel.clone()),
                })
            })
            .collect();
        Ok(json!({ "sessions": list }).to_string())
    }
}

pub struct SessionsHistory;

#[async_trait]
impl Tool for SessionsHistory {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "sessions_history".into(),
            description: "Read the last messages of a session's transcript.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "sessionKey": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": HISTORY_LIMIT},
                    "includeTools": {"type": "boolean"}
                },
                "required": ["sessionKey"]
            }),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let key = arg::req_str(&args, "sessionKey", MAX_KEY_CHARS)?;
        let limit = arg::opt_clamped(&args, "limit", 20, 1, HISTORY_LIMIT)?;
        let tools = arg::opt_bool(&args, "includeTools", false)?;
        let Some(session) = ctx.rt.store.latest_session(key).await? else {
            return Err(unseen(key));
        };
        if !visible(ctx, key, &session.agent_id).await? {
            return Err(unseen(key));
        }
        let msgs = ctx.rt.store.transcript_tail(&session.id, limit).await?;
        let msgs: Vec<Value> = msgs
            .iter()
            .filter(|m| tools || m.role != crate::store::Role::Tool)
            .map(|m| json!({"role": m.role.as_str(), "content": m.content, "at": m.created_at}))
            .collect();
        Ok(json!({"sessionKey": key, "sessionId": session.id, "status": session.status.as_str(), "messages": msgs}).to_string())
    }
}

pub struct SessionsSend;

#[async_trait]
impl Tool for SessionsSend {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "sessions_send".into(),
            description: "Send a message into another session; it runs a turn there and replies in that session's chat.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "sessionKey": {"type": "string"},
                    "message": {"type": "string"}
                },
                "required": ["sessionKey", "message"]
            }),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let key = arg::req_str(&args, "sessionKey", MAX_KEY_CHARS)?;
        let message = arg::req_str(&args, "message", MAX_MESSAGE_CHARS)?;
        if key == ctx.session_key {
            return Err(ToolError::Model(
                "cannot send to the current session".into(),
            ));
        }
        let Some(session) = ctx.rt.store.active_session(key).await? else {
            return Err(unseen(key));
        };
        if !visible(ctx, key, &session.agent_id).await? {
            return Err(unseen(key));
        }
        let origin = session.origin.clone().unwrap_or(Origin {
            channel: "api".into(),
            account: None,
            chat_id: key.to_string(),
            thread_id: None,
            kind: ChatKind::Direct,
            reply_handle: None,
        });
        let sender = format!("session:{}", ctx.session_key);
        let submission = dispatch::Submission {
            session_key: key,
            agent_id: &session.agent_id,
            origin: &origin,
            sender_id: &sender,
            text: message,
        };
        let sub = dispatch::submit_message(ctx.rt, &submission).await?;
        Ok(json!({"status": "accepted", "sessionKey": key, "runId": sub.run_id}).to_string())
    }
}
