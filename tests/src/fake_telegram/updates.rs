//! Building the updates users' messages arrive in: `message` objects with the entities
//! Telegram would detect, forum topic fields, and replies.

use serde_json::{json, Value};

use super::state::World;
use super::types::{unix_now, Chat, ChatKind, User};

/// The icon colour Telegram gives a topic created without one (`0x6FB9F0`).
const TOPIC_ICON_COLOR: i64 = 7_322_096;

/// A bot message as the fake remembers it, for replies and edits.
#[derive(Debug, Clone)]
pub(super) struct BotMessage {
    /// The text as sent (HTML included), compared by `editMessageText`.
    pub(super) raw: String,
    /// What users see.
    pub(super) plain: String,
    pub(super) thread_id: Option<i64>,
    /// Its inline keyboard, if any.
    pub(super) reply_markup: Option<Value>,
}

/// A `{"message": …}` update (without `update_id`) for `text` written by `from` in `chat`.
/// `reply_to` is the message replied to; in a forum topic it defaults to the topic's first
/// message, as Telegram does.
pub(super) fn user_message(
    world: &mut World,
    chat: &Chat,
    from: &User,
    text: &str,
    reply_to: Option<Value>,
) -> Value {
    let chat_json = chat.to_json(Some(from));
    let date = unix_now();
    if let Some(thread_id) = chat.thread_id.filter(|_| chat.kind == ChatKind::Forum) {
        // A topic's messages come after the message that opened it.
        let last = world.last_message_id.entry(chat.id).or_insert(0);
        *last = (*last).max(thread_id);
    }
    let mut message = json!({
        "message_id": world.next_message_id(chat.id),
        "from": from.to_json(),
        "chat": chat_json,
        "date": date,
        "text": text,
    });
    let entities = entities(text);
    if !entities.is_empty() {
        message["entities"] = Value::Array(entities);
    }
    if let Some(thread_id) = chat.thread_id {
        message["message_thread_id"] = json!(thread_id);
        if chat.kind == ChatKind::Forum {
            message["is_topic_message"] = json!(true);
        }
    }
    let reply_to = reply_to.or_else(|| topic_start(chat, from, &chat_json, date));
    if let Some(reply_to) = reply_to {
        message["reply_to_message"] = reply_to;
    }
    json!({ "message": message })
}

/// The service message that opened a forum topic (its id is the topic's thread id).
fn topic_start(chat: &Chat, creator: &User, chat_json: &Value, date: i64) -> Option<Value> {
    let thread_id = chat.thread_id.filter(|_| chat.kind == ChatKind::Forum)?;
    Some(json!({
        "message_id": thread_id,
        "from": creator.to_json(),
        "chat": chat_json,
        "date": date,
        "message_thread_id": thread_id,
        "is_topic_message": true,
        "forum_topic_created": {"name": format!("Topic {thread_id}"), "icon_color": TOPIC_ICON_COLOR},
    }))
}

/// A `{"callback_query": …}` update: `from` pressed the button with `data` under bot message
/// `message_id` in `chat` (the message as the bot left it, keyboard included).
pub(super) fn callback_query(
    world: &World,
    chat: &Chat,
    from: &User,
    message_id: i64,
    data: &str,
    query_id: &str,
) -> Value {
    let mut message = bot_message(world, chat, message_id);
    if let Some(markup) = world
        .bot_texts
        .get(&(chat.id, message_id))
        .and_then(|m| m.reply_markup.clone())
    {
        message["reply_markup"] = markup;
    }
    json!({
        "callback_query": {
            "id": query_id,
            "from": from.to_json(),
            "message": message,
            "chat_instance": format!("ci{}", chat.id.unsigned_abs()),
            "data": data,
        }
    })
}

/// The `Message` object of bot message `message_id` in `chat` (empty text if the bot never
/// sent it), for a user's reply.
pub(super) fn bot_message(world: &World, chat: &Chat, message_id: i64) -> Value {
    let known = world.bot_texts.get(&(chat.id, message_id));
    let mut message = json!({
        "message_id": message_id,
        "from": User::bot().to_json(),
        "chat": chat.to_json(None),
        "date": unix_now(),
        "text": known.map_or("", |message| message.plain.as_str()),
    });
    if let Some(thread_id) = known
        .and_then(|message| message.thread_id)
        .or(chat.thread_id)
    {
        message["message_thread_id"] = json!(thread_id);
        if chat.kind == ChatKind::Forum {
            message["is_topic_message"] = json!(true);
        }
    }
    message
}

fn is_word(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || ch == '_'
}

/// The `bot_command` (`/cmd`, `/cmd@bot`) and `mention` (`@username`, 5–32 characters)
/// entities Telegram detects in a user's text; offsets and lengths in UTF-16 code units.
pub(super) fn entities(text: &str) -> Vec<Value> {
    let chars: Vec<char> = text.chars().collect();
    // utf16[i]: UTF-16 offset of chars[i]; one extra entry for the end.
    let mut utf16 = Vec::with_capacity(chars.len() + 1);
    let mut offset = 0;
    for ch in &chars {
        utf16.push(offset);
        offset += ch.len_utf16();
    }
    utf16.push(offset);
    let word_end = |from: usize| {
        (from..chars.len())
            .find(|&index| !is_word(chars[index]))
            .unwrap_or(chars.len())
    };
    let entity = |kind: &str, start: usize, end: usize| json!({"type": kind, "offset": utf16[start], "length": utf16[end] - utf16[start]});

    let mut found = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        let at_word_start = index == 0 || !is_word(chars[index - 1]);
        let end = word_end(index + 1);
        match chars[index] {
            '/' if (index == 0 || chars[index - 1].is_whitespace()) && end > index + 1 => {
                let mut command_end = end;
                if chars.get(end) == Some(&'@') {
                    let bot_end = word_end(end + 1);
                    if bot_end > end + 1 {
                        command_end = bot_end;
                    }
                }
                found.push(entity("bot_command", index, command_end));
                index = command_end;
                continue;
            }
            '@' if at_word_start && (5..=32).contains(&(end - index - 1)) => {
                found.push(entity("mention", index, end));
                index = end;
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::entities;

    #[test]
    fn finds_commands_and_mentions_in_utf16_units() {
        assert_eq!(
            entities("/subagents@switchboard_bot list"),
            vec![json!({"type": "bot_command", "offset": 0, "length": 26})]
        );
        assert_eq!(
            entities("🙂 @switchboard_bot hi @abc /stop"),
            vec![
                json!({"type": "mention", "offset": 3, "length": 16}),
                json!({"type": "bot_command", "offset": 28, "length": 5}),
            ]
        );
        assert_eq!(entities("a/b x@y.z 1/2"), Vec::<serde_json::Value>::new());
    }
}
