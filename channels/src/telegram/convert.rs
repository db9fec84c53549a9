//! Telegram update → [`InboundMessage`]: whether a message is addressed to the bot, and
//! its text with the bot's @mention removed; a callback query (an inline keyboard button
//! pressed) → a press. Pure, and total: no input panics it.

use std::ops::Range;

use teloxide::types::{
    CallbackQuery, CallbackQueryId, ChatId, Message, MessageId, Update, UpdateKind,
};

use super::{BotInfo, CHANNEL_ID};
use crate::{ChatKind, InboundMessage, Origin, Press};

/// What an update is to the gateway.
#[derive(Debug)]
pub(super) enum Converted {
    /// A message for routing (addressed or not: access rules decide what to do with it).
    Message(Box<InboundMessage>),
    /// A press of an inline keyboard button, and where to answer it.
    Press(Box<InboundMessage>, Callback),
    /// Nothing the gateway handles (another kind of update, a bot's message, no text, a
    /// button that is not the bot's).
    Ignored,
    /// A message Telegram sent that teloxide could not read: skipped and recorded.
    Unreadable(String),
}

/// The message an update carries, if it is one the gateway handles (text or caption).
pub(super) fn convert(update: &Update, me: &BotInfo) -> Converted {
    match &update.kind {
        UpdateKind::Message(msg) => match inbound(msg, me) {
            Some(m) => Converted::Message(Box::new(m)),
            None => Converted::Ignored,
        },
        UpdateKind::CallbackQuery(q) => match press(q) {
            Some((m, callback)) => Converted::Press(Box::new(m), callback),
            None => Converted::Ignored,
        },
        // teloxide turns an update it cannot parse into an empty `Error`. The adapter asks
        // Telegram for messages and button presses only (polling and webhook), so this is a
        // lost message or press.
        UpdateKind::Error(_) => Converted::Unreadable(
            "an update teloxide cannot parse (malformed or unknown fields)".to_string(),
        ),
        _ => Converted::Ignored,
    }
}

/// Where a callback query is answered: its id, and the message its button was on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Callback {
    pub(super) id: CallbackQueryId,
    pub(super) chat: ChatId,
    pub(super) message: MessageId,
}

/// A press of one of the bot's buttons: the presser is the sender, the message's chat the
/// origin. A press of a message Telegram no longer shows (inaccessible), of an inline-mode
/// message or of a game button is not one of ours.
fn press(q: &CallbackQuery) -> Option<(InboundMessage, Callback)> {
    let data = q.data.clone()?;
    let message = q.message.as_ref()?;
    if q.from.is_bot || message.regular_message().is_none() {
        return None;
    }
    let chat = message.chat();
    let thread_id = message
        .regular_message()
        .filter(|m| m.is_topic_message)
        .and_then(|m| m.thread_id)
        .map(|t| t.0 .0.to_string());
    let direct = chat.is_private();
    let msg = InboundMessage {
        origin: Origin {
            channel: CHANNEL_ID.to_string(),
            account: None,
            chat_id: chat.id.0.to_string(),
            thread_id,
            kind: if direct {
                ChatKind::Direct
            } else {
                ChatKind::Group
            },
            reply_handle: None,
        },
        sender_id: q.from.id.0.to_string(),
        sender_name: q
            .from
            .username
            .as_ref()
            .map(|u| format!("@{u}"))
            .or_else(|| Some(q.from.first_name.clone())),
        sender_username: q.from.username.clone(),
        text: String::new(),
        message_id: Some(format!("callback:{}", q.id.0)),
        addressed: true,
        press: Some(Press {
            action: data,
            message_id: Some(message.id().0.to_string()),
        }),
        media: Vec::new(),
    };
    let callback = Callback {
        id: q.id.clone(),
        chat: chat.id,
        message: message.id(),
    };
    Some((msg, callback))
}

fn inbound(msg: &Message, me: &BotInfo) -> Option<InboundMessage> {
    let media = super::media::media_of(msg);
    // A photo, file or voice note without a caption is a message too.
    let text = msg
        .text()
        .or_else(|| msg.caption())
        .or_else(|| (!media.is_empty()).then_some(""))?;
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
        press: None,
        media,
    })
}

/// Whether a message is for the bot, and its text with the bot's @mentions removed.
fn addressed(msg: &Message, text: &str, me: &BotInfo, direct: bool) -> (bool, String) {
    let found = mentions(text, &me.username);
    // A reply to the bot's own message; in a forum topic every message "replies" to the
    // service message that opened the topic, which is not a reply to anyone.
    let reply_to_bot = msg
        .reply_to_message()
        .filter(|r| r.forum_topic_created().is_none())
        .and_then(|r| r.from.as_ref())
        .is_some_and(|u| u.id.0 == me.id);
    // One of the bot's commands, bare or as `/cmd@thisbot`; text that merely starts with
    // `/` ("/usr/bin/python3 crashed") or `/cmd@otherbot` is not.
    let command_for_us = crate::command_in(&me.commands, text, Some(&me.username)).is_some();
    let mut clean = text.to_string();
    if command_for_us {
        // `/cmd@thisbot args` → `/cmd args`: the gateway takes a name with an `@` suffix
        // for another bot's command.
        let head_end = text.find(char::is_whitespace).unwrap_or(text.len());
        if let Some(at) = text[..head_end].find('@') {
            clean = format!("{}{}", &text[..at], &text[head_end..]);
        }
    } else {
        // Cutting a mention can join its neighbours into a new one ("x@bot@bot"): cut
        // until none is left (each pass shortens the text).
        let mut cut = found.clone();
        while !cut.is_empty() {
            clean = without(&clean, &cut);
            cut = mentions(&clean, &me.username);
        }
    }
    (
        direct || !found.is_empty() || reply_to_bot || command_for_us,
        clean,
    )
}

/// Byte ranges of every `@username` mention of the bot in `text`: ASCII case-insensitive
/// (Telegram usernames are ASCII and case-insensitive) and only as a whole word, so
/// `@username_fan` names someone else and `mail@username` is not a mention. The ranges
/// cover ASCII bytes only, so they always fall on char boundaries of `text`.
pub(super) fn mentions(text: &str, username: &str) -> Vec<Range<usize>> {
    let name = username.as_bytes();
    if name.is_empty() || !username.is_ascii() {
        return Vec::new();
    }
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = bytes[from..]
        .iter()
        .position(|&b| b == b'@')
        .map(|p| from + p)
    {
        let end = at + 1 + name.len();
        let named = bytes
            .get(at + 1..end)
            .is_some_and(|b| b.eq_ignore_ascii_case(name));
        let starts_word = at == 0 || !word(bytes[at - 1]);
        let ends_word = bytes.get(end).is_none_or(|&b| !word(b));
        if named && starts_word && ends_word {
            found.push(at..end);
            from = end;
        } else {
            from = at + 1;
        }
    }
    found
}

/// `text` without the `cut` ranges (sorted, disjoint): a space on each side of a cut
/// becomes one space, and the result is trimmed.
fn without(text: &str, cut: &[Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for r in cut {
        out.push_str(&text[from..r.start]);
        from = r.end;
        if out.ends_with(' ') && text[from..].starts_with(' ') {
            from += 1;
        }
    }
    out.push_str(&text[from..]);
    out.trim().to_string()
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "convert_press_tests.rs"]
mod press_tests;
