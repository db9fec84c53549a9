//! Lines edited in place on Slack: `post_line` posts with `chat.postMessage` (in the
//! origin's thread) and answers the message's `ts`; `edit_line` rewrites it with
//! `chat.update`. A message Slack no longer has, or not the bot's, is [`LineError::Gone`].

use serde_json::json;

use super::web::{ApiError, Body};
use super::Inner;
use crate::{ChannelError, LineError, Origin};

/// The first part of `text`, converted, within `limit`.
fn one_part(text: &str, limit: usize) -> String {
    let text = super::mrkdwn::to_mrkdwn(text);
    crate::split::split_code_aware(&text, None, limit)
        .into_iter()
        .next()
        .unwrap_or_default()
}

pub(super) async fn post(
    inner: &Inner,
    limit: usize,
    origin: &Origin,
    text: &str,
) -> Result<String, LineError> {
    let channel = super::channel_of(origin)?;
    let ts = super::send::post(
        inner,
        channel,
        origin.thread_id.as_deref(),
        &one_part(text, limit),
        None,
    )
    .await?;
    Ok(ts)
}

pub(super) async fn edit(
    inner: &Inner,
    limit: usize,
    origin: &Origin,
    message_id: &str,
    text: &str,
) -> Result<(), LineError> {
    let channel = super::channel_of(origin)?;
    if !super::convert::is_ts(message_id) {
        return Err(LineError::Gone(format!(
            "not a Slack message ts: {message_id}"
        )));
    }
    let body = json!({"channel": channel, "ts": message_id, "text": one_part(text, limit)});
    match inner.web.call("chat.update", Body::Json(body)).await {
        Ok(_) => Ok(()),
        Err(e @ ApiError::Slack { .. })
            if matches!(
                e.slack_error(),
                Some("message_not_found" | "cant_update_message" | "channel_not_found")
            ) =>
        {
            Err(LineError::Gone(e.to_string()))
        }
        Err(e) => Err(LineError::Channel(ChannelError::from(e))),
    }
}
