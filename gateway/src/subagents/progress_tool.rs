//! `progress {text}` (`group:sessions`, sub-agents only; docs/tools.md): a one-line status
//! the requester's chat shows in one message per child, edited in place. The tool cleans
//! the line and hands it to the `progress` hub, which posts and edits
//! at its own pace: the call never waits for the chat.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::progress::{self, Target, MIN_EDIT_INTERVAL};
use super::progress_text::{self, MAX_LINE};
use crate::agent::provider::ToolSpec;
use crate::agent::tools::args::req_str;
use crate::agent::tools::{Tool, ToolContext, ToolError};

/// Longest text a call may give (the line shows at most `MAX_LINE` characters of it).
const MAX_INPUT: usize = 2000;

pub struct Progress;

#[async_trait]
impl Tool for Progress {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "progress".into(),
            description: format!(
                "Show what you are doing now as one short line in your requester's chat (one \
                 message, edited in place; at most one edit per {} s, the newest line wins). \
                 Returns at once. Use it at milestones, not for results: your final answer is \
                 announced as usual.",
                MIN_EDIT_INTERVAL.as_secs()
            ),
            parameters: json!({"type": "object", "properties": {
                "text": {"type": "string", "description": format!("One line, at most {MAX_LINE} characters"), "maxLength": MAX_INPUT}
            }, "required": ["text"]}),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        if !ctx.is_subagent {
            return Err(ToolError::Model(
                "`progress` is for sub-agents: it updates the line their requester's chat \
                 shows. Write to the user in your answer instead."
                    .into(),
            ));
        }
        let text = req_str(&args, "text", MAX_INPUT)?;
        let Some(line) = progress_text::line(text, MAX_LINE) else {
            return Err(ToolError::Model(
                "`text` has nothing to show once line breaks and control characters are removed"
                    .into(),
            ));
        };
        let Some(child) = ctx.rt.store.subagent_by_child(ctx.session_key).await? else {
            return Err(ToolError::Model(
                "this run is not a registered sub-agent; there is no requester to show it to"
                    .into(),
            ));
        };
        let Some(origin) = child
            .requester_origin
            .clone()
            .filter(crate::outbox::is_chat)
        else {
            return Ok("noted: your requester has no chat to show progress in".into());
        };
        let target = Target {
            child: ctx.session_key.to_string(),
            origin,
        };
        let text = progress_text::shown(&progress::label_of(&child), &line);
        progress::show(ctx.rt, target, text);
        Ok(format!("shown: {line}"))
    }
}
