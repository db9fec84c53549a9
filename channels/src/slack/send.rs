//! Sending a message: Markdown → mrkdwn, split to the text limit (a part that carries
//! buttons to a section block's 3,000 characters), each part posted with
//! `chat.postMessage` in the origin's thread (`thread_ts`), the buttons under the last
//! part, link unfurling off. A file goes through `files` after the text.

use serde_json::{json, Value};

use super::web::Body;
use super::Inner;
use crate::{ChannelError, DeliveryProgress, OutboundMessage};

pub(super) async fn send(
    inner: &Inner,
    limit: usize,
    msg: &OutboundMessage,
    progress: &dyn DeliveryProgress,
) -> Result<(), ChannelError> {
    let channel = super::channel_of(&msg.origin)?;
    let thread = msg.origin.thread_id.as_deref();
    let text = super::mrkdwn::to_mrkdwn(&msg.text);
    let footer = msg.footer.as_deref().map(super::mrkdwn::escape);
    let limit = if crate::renderable(&msg.actions).next().is_some() {
        limit.min(super::MAX_SECTION)
    } else {
        limit
    };
    let mut parts = crate::split::split_code_aware(&text, footer.as_deref(), limit);
    if let Some(file) = &msg.file {
        // The file goes last, after every text part (an empty text: the file alone).
        parts.retain(|p| !p.trim().is_empty());
        parts.push(String::new());
        return crate::send_parts(&parts, progress, |part, last| async move {
            if last {
                super::files::upload(inner, channel, thread, file).await
            } else {
                post(inner, channel, thread, part, None).await.map(|_| ())
            }
        })
        .await;
    }
    crate::send_parts(&parts, progress, |part, last| {
        let blocks = if last {
            super::actions::blocks(part, &msg.actions)
        } else {
            None
        };
        async move { post(inner, channel, thread, part, blocks).await.map(|_| ()) }
    })
    .await
}

/// Post one message; its `ts`. A post in a thread marks the thread as one the bot is in.
pub(super) async fn post(
    inner: &Inner,
    channel: &str,
    thread: Option<&str>,
    text: &str,
    blocks: Option<Value>,
) -> Result<String, ChannelError> {
    let text = if text.trim().is_empty() {
        "\u{200b}"
    } else {
        text
    };
    let mut body = json!({"channel": channel, "text": text,
                          "unfurl_links": false, "unfurl_media": false});
    if let Some(t) = thread {
        body["thread_ts"] = json!(t);
    }
    if let Some(b) = blocks {
        body["blocks"] = b;
    }
    // The thread is the bot's from the moment it posts there: a reply that arrives before
    // Slack's answer to this call is already addressed to the bot.
    if let Some(t) = thread {
        inner.threads.lock().insert(channel, t);
    }
    let answer = inner.web.call("chat.postMessage", Body::Json(body)).await?;
    answer["ts"]
        .as_str()
        .filter(|ts| super::convert::is_ts(ts))
        .map(str::to_owned)
        .ok_or_else(|| ChannelError::Permanent("Slack answered a post without a ts".into()))
}
