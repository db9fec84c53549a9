//! `message {sessionKey | channel+chatId, text, path?, asPhoto?}` (`group:messaging`): send
//! a message (and a workspace file: `outgoing`) to a chat through the outbox, like
//! any reply (durable, retried, in order). A run writes to
//! its own chat (a sub-agent's: its requester's) and to the chats listed in
//! `tools.message.allowTargets`, nowhere else: a run acts for its own chat.

use async_trait::async_trait;
use serde_json::{json, Value};
use switchboard_channels::{ChatKind, Origin};

use super::{opt_arg, str_arg, Tool, ToolContext, ToolError};
use crate::agent::provider::ToolSpec;

/// Longest text one call sends (channels split it to their own limits).
const MAX_TEXT: usize = 32 * 1024;

pub struct Message;

#[async_trait]
impl Tool for Message {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "message".into(),
            description: "Send a message to a chat: give the sessionKey of a session (see sessions_list), or channel and chatId; with no target, your own chat. `path` sends a file of your workspace with it (an image as a photo unless asPhoto is false).".into(),
            parameters: json!({"type": "object", "properties": {
                "sessionKey": {"type": "string"},
                "channel": {"type": "string"},
                "chatId": {"type": "string"},
                "text": {"type": "string"},
                "path": {"type": "string", "description": "A file of your workspace to send"},
                "asPhoto": {"type": "boolean"}
            }}),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let path = opt_arg(&args, "path", "a string", |v: &Value| {
            v.as_str().map(str::to_string)
        })?;
        let as_photo = opt_arg(&args, "asPhoto", "a boolean", Value::as_bool)?;
        let text = match (&path, args.get("text")) {
            (Some(_), None | Some(Value::Null)) => "",
            _ => str_arg(&args, "text")?,
        };
        if text.len() > MAX_TEXT {
            return Err(ToolError::Model(format!(
                "the text is {} bytes; at most {MAX_TEXT}",
                text.len()
            )));
        }
        let as_string = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let key = opt_arg(&args, "sessionKey", "a string", as_string)?;
        let channel = opt_arg(&args, "channel", "a string", as_string)?;
        let chat = opt_arg(&args, "chatId", "a string or number", as_string)?;
        let store = &ctx.rt.store;
        let own = own_chat(ctx);
        let origin =
            match (key, channel, chat) {
                (Some(key), None, None) => {
                    let session = store.latest_session(&key).await?;
                    match session.and_then(|s| s.origin) {
                        Some(o) if crate::outbox::is_chat(&o) && may_write(ctx, own, &o) => o,
                        Some(o) if crate::outbox::is_chat(&o) => {
                            return Err(not_allowed(&o.channel, &o.chat_id))
                        }
                        _ => {
                            return Err(ToolError::Model(format!(
                                "no chat to write to for session `{key}` (it has no channel chat)"
                            )))
                        }
                    }
                }
                // A file with no target goes to the run's own chat.
                (None, None, None) if path.is_some() => match own {
                    Some(o) => o.clone(),
                    None => return Err(ToolError::Model(
                        "this run has no chat of its own; give sessionKey, or channel and chatId"
                            .into(),
                    )),
                },
                (None, Some(channel), Some(chat)) => {
                    if ctx.rt.channel(&channel).is_none() {
                        return Err(ToolError::Model(format!(
                            "no channel `{channel}` is running"
                        )));
                    }
                    match own.filter(|o| o.channel == channel && o.chat_id == chat) {
                        Some(o) => o.clone(),
                        None if ctx.cfg.tools.message.allows(&channel, &chat) => {
                            match store
                                .session_for_chat(&channel, &chat)
                                .await?
                                .and_then(|s| s.origin)
                            {
                                Some(o) => o,
                                None => Origin {
                                    channel,
                                    account: None,
                                    chat_id: chat,
                                    thread_id: None,
                                    kind: ChatKind::Direct,
                                    reply_handle: None,
                                },
                            }
                        }
                        None => return Err(not_allowed(&channel, &chat)),
                    }
                }
                _ => {
                    return Err(ToolError::Model(
                        "give either sessionKey, or channel and chatId".into(),
                    ))
                }
            };
        // One message per tool call, even if the call is executed again.
        let key = outbox_key(ctx.run_id, ctx.call_id);
        if let Some(path) = path {
            let Some(channel) = ctx.rt.channel(&origin.channel) else {
                return Err(ToolError::Model(format!(
                    "no channel `{}` is running",
                    origin.channel
                )));
            };
            let file = super::outgoing::prepare(ctx, &*channel, &path, as_photo).await?;
            let (name, kind, size) = (file.name.clone(), file.kind, file.size);
            store
                .enqueue_outbox_with_file(&key, &origin, text, &file)
                .await?;
            ctx.rt.tasks.outbox_wake.notify_one();
            return Ok(json!({"status": "queued", "channel": origin.channel, "chatId": origin.chat_id, "file": name, "as": kind, "bytes": size}).to_string());
        }
        store.enqueue_outbox(&key, &origin, text).await?;
        ctx.rt.tasks.outbox_wake.notify_one();
        Ok(
            json!({"status": "queued", "channel": origin.channel, "chatId": origin.chat_id})
                .to_string(),
        )
    }
}

/// The chat the run acts for: its own (a sub-agent's: its requester's), when it has one.
pub fn own_chat<'a>(ctx: &ToolContext<'a>) -> Option<&'a Origin> {
    ctx.origin.filter(|o| crate::outbox::is_chat(o))
}

/// Whether the run may write to `to`: its own chat, or a chat listed in
/// `tools.message.allowTargets`.
fn may_write(ctx: &ToolContext<'_>, own: Option<&Origin>, to: &Origin) -> bool {
    own.is_some_and(|o| o.channel == to.channel && o.chat_id == to.chat_id)
        || ctx.cfg.tools.message.allows(&to.channel, &to.chat_id)
}

/// The refusal of a chat that is not the run's own and not listed.
pub fn not_allowed(channel: &str, chat: &str) -> ToolError {
    ToolError::Model(format!(
        "this run writes only to its own chat; {channel} chat {chat} is not in tools.message.allowTargets"
    ))
}

/// The outbox key of a `message` call (the web chat's history finds its file by it).
pub fn outbox_key(run_id: &str, call_id: &str) -> String {
    format!("message:{run_id}:{call_id}")
}
