//! Telegram update → [`InboundMessage`].

use teloxide::types::{Message, Update, UpdateKind};

use super::{BotInfo, CHANNEL_ID};
use crate::{ChatKind, InboundMessage, Origin};

/// The message an update carries, if it is one the gateway handles (text or caption).
pub(super) fn inbound(update: &Update, me: &BotInfo) -> Option<InboundMessage> {
    let UpdateKind::Message(msg) = &update.kind else {
        return None;
    };
    let text = msg.text().or_else(|| msg.caption())?;
    let from = msg.from.as_ref()?;
    if from.is_bot {
        return None;
    }
    let direct = msg.chat.is_private();
    let thread_id = if msg.is_topic_message {
        msg.thread_id.map(|t| t.0 .0.to_string())
    } else {
        None
    };
    let (addressed, text) = addressed(msg, text, me, direct);
    Some(InboundMessage {
        origin: Origin {
            channel: CHANNEL_ID.to_string(),
            account: None,
            chat_id: msg.chat.id.0.to_string(),
            thread_id,
            kind: if direct {
                ChatKind::Direct
            } else {
                ChatKind::Group
            },
            reply_handle: None,
        },
        sender_id: from.id.0.to_string(),
        sender_name: from
            .username
            .as_ref()
            .map(|u| format!("@{u}"))
            .or_else(|| Some(from.first_name.clone())),
        sender_username: from.username.clone(),
        text,
        message_id: Some(format!("{}:{}", msg.chat.id.0, msg.id.0)),
        addressed,
    })
}

/// Whether a message is for the bot, and its text with a leading `@bot` mention removed.
fn addressed(msg: &Message, text: &str, me: &BotInfo, direct: bool) -> (bool, String) {
    let mention = format!("@{}", me.username);
    let lower = text.to_lowercase();
    let mentioned = !me.username.is_empty() && lower.contains(&mention.to_lowercase());
    let reply_to_bot = msg
        .reply_to_message()
        .and_then(|r| r.from.as_ref())
        .is_some_and(|u| u.id.0 == me.id);
    let command_for_us = text.starts_with('/') && {
        let head = text.split_whitespace().next().unwrap_or("");
        match head.split_once('@') {
            Some((_, bot)) => bot.eq_ignore_ascii_case(&me.username),
            None => true,
        }
    };
    let mut clean = text.to_string();
    if mentioned && !text.starts_with('/') {
        if let Some(pos) = lower.find(&mention.to_lowercase()) {
            clean.replace_range(pos..pos + mention.len(), "");
            clean = clean.trim().to_string();
        }
    }
    (direct || mentioned || reply_to_bot || command_for_us, clean)
}
