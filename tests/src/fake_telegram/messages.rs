//! `sendMessage`, `editMessageText` and `deleteMessage`: Telegram's checks on text, chats and
//! replies, the `Message` objects answered, and the record of what the bot sent.

use std::time::Instant;

use serde_json::{json, Value};

use super::html;
use super::state::{State, World};
use super::types::{inline_buttons, unix_now, CallbackAnswer, EditedMessage, SentMessage, User};
use super::updates::BotMessage;
use super::wire::{flag, int, structured, text, Reply};

/// Longest message text after entity parsing. Counted in UTF-16 code units, as Telegram counts
/// text (an emoji outside the BMP counts 2), so an adapter splitting by `char`s can exceed it.
pub(super) const MAX_TEXT_UTF16: usize = 4096;

/// The `chat_id` field: an integer, or a numeric string. `@username` targets are not supported
/// (Telegram resolves them only for public channels), so they are answered `chat not found`.
pub(super) fn chat_id(params: &Value) -> Result<i64, Reply> {
    if text(params, "chat_id").is_some_and(|id| id.starts_with('@')) {
        return Err(Reply::bad_request("chat not found"));
    }
    int(params, "chat_id")?.ok_or_else(|| Reply::bad_request("chat_id is empty"))
}

/// Records a violation when the bot addresses a chat no update ever showed it.
pub(super) fn check_known_chat(world: &mut World, method: &str, chat: i64) {
    if !world.chats.contains_key(&chat) {
        world.violation(format!(
            "{method} to chat {chat}, which never appeared in an update (the bot cannot know it)"
        ));
    }
}

/// The visible text of `raw` under `parse_mode`, or Telegram's refusal.
fn checked_text(raw: &str, parse_mode: Option<&str>) -> Result<String, Reply> {
    let plain = match parse_mode.map(str::to_ascii_lowercase).as_deref() {
        None => raw.to_owned(),
        Some("html") => html::parse(raw)
            .map_err(|error| Reply::bad_request(format!("can't parse entities: {error}")))?,
        // Markdown is not checked; its text is taken as is.
        Some("markdown" | "markdownv2") => raw.to_owned(),
        Some(_) => return Err(Reply::bad_request("unsupported parse_mode")),
    };
    if plain.trim().is_empty() {
        return Err(Reply::bad_request("message text is empty"));
    }
    if plain.encode_utf16().count() > MAX_TEXT_UTF16 {
        return Err(Reply::bad_request("message is too long"));
    }
    Ok(plain)
}

/// Whether message `id` was ever posted in `chat`.
fn exists(world: &World, chat: i64, id: i64) -> bool {
    id > 0 && id <= world.last_message_id.get(&chat).copied().unwrap_or(0)
}

/// The `Message` object of a bot message.
fn message_json(world: &World, chat: i64, id: i64, plain: &str, thread: Option<i64>) -> Value {
    let chat_json = world.chat_json(chat);
    let mut message = json!({
        "message_id": id,
        "from": User::bot().to_json(),
        "chat": chat_json,
        "date": unix_now(),
        "text": plain,
    });
    if let Some(thread) = thread {
        message["message_thread_id"] = json!(thread);
        if chat_json["is_forum"] == true {
            message["is_topic_message"] = json!(true);
        }
    }
    message
}

pub(super) fn send_message(state: &State, params: &Value) -> Reply {
    match try_send_message(state, params) {
        Ok(reply) | Err(reply) => reply,
    }
}

fn try_send_message(state: &State, params: &Value) -> Result<Reply, Reply> {
    let chat = chat_id(params)?;
    let raw = text(params, "text").unwrap_or_default();
    let parse_mode = text(params, "parse_mode").filter(|mode| !mode.is_empty());
    let plain = checked_text(&raw, parse_mode.as_deref())?;
    let thread_id = int(params, "message_thread_id")?;
    let reply_parameters = structured(params, "reply_parameters").unwrap_or(Value::Null);
    let reply_to = match int(&reply_parameters, "message_id")? {
        Some(id) => Some(id),
        None => int(params, "reply_to_message_id")?,
    };
    let reply_anyway = flag(&reply_parameters, "allow_sending_without_reply")
        || flag(params, "allow_sending_without_reply");
    let reply_markup = checked_markup(params)?;
    let preview_disabled = preview_disabled(params);
    let reply = state.change(|world| {
        check_known_chat(world, "sendMessage", chat);
        if let Some(reply_to) = reply_to {
            if !reply_anyway && !exists(world, chat, reply_to) {
                return Reply::bad_request("message to be replied not found");
            }
        }
        let message_id = world.next_message_id(chat);
        let message = message_json(world, chat, message_id, &plain, thread_id);
        world.bot_texts.insert(
            (chat, message_id),
            BotMessage {
                raw: raw.clone(),
                plain: plain.clone(),
                thread_id,
                reply_markup: reply_markup.clone(),
            },
        );
        world.sent.push(SentMessage {
            chat_id: chat,
            thread_id,
            text: raw,
            plain_text: plain,
            parse_mode,
            message_id,
            at: Instant::now(),
            reply_to,
            reply_markup,
            preview_disabled,
        });
        Reply::Ok(message)
    });
    Ok(reply)
}

pub(super) fn edit_message_text(state: &State, params: &Value) -> Reply {
    match try_edit_message_text(state, params) {
        Ok(reply) | Err(reply) => reply,
    }
}

fn try_edit_message_text(state: &State, params: &Value) -> Result<Reply, Reply> {
    if params.get("inline_message_id").is_some() {
        state.change(|world| {
            world.violation("editMessageText of an inline message (not supported)".to_owned());
        });
        return Err(Reply::bad_request(
            "inline messages are not supported by the fake",
        ));
    }
    let chat = chat_id(params)?;
    let message_id = int(params, "message_id")?
        .ok_or_else(|| Reply::bad_request("message identifier is not specified"))?;
    let raw = text(params, "text").unwrap_or_default();
    let parse_mode = text(params, "parse_mode").filter(|mode| !mode.is_empty());
    let plain = checked_text(&raw, parse_mode.as_deref())?;
    // Without `reply_markup` the message loses its inline keyboard, as on Telegram.
    let reply_markup = checked_markup(params)?;
    let preview_disabled = preview_disabled(params);
    let reply = state.change(|world| {
        check_known_chat(world, "editMessageText", chat);
        let Some(known) = world.bot_texts.get_mut(&(chat, message_id)) else {
            return Reply::bad_request("message to edit not found");
        };
        if known.raw == raw && known.reply_markup == reply_markup {
            return Reply::bad_request(
                "message is not modified: specified new message content and reply markup are \
                 exactly the same as a current content and reply markup of the message",
            );
        }
        known.raw = raw;
        known.plain = plain.clone();
        known.reply_markup = reply_markup.clone();
        let thread_id = known.thread_id;
        world.edits.push(EditedMessage {
            chat_id: chat,
            message_id,
            plain_text: plain.clone(),
            reply_markup,
            preview_disabled,
        });
        let mut message = message_json(world, chat, message_id, &plain, thread_id);
        message["edit_date"] = json!(unix_now());
        Reply::Ok(message)
    });
    Ok(reply)
}

pub(super) fn delete_message(state: &State, params: &Value) -> Reply {
    let (chat, message_id) = match (chat_id(params), int(params, "message_id")) {
        (Ok(chat), Ok(Some(message_id))) => (chat, message_id),
        (Err(reply), _) | (_, Err(reply)) => return reply,
        (_, Ok(None)) => return Reply::bad_request("message identifier is not specified"),
    };
    state.change(|world| {
        check_known_chat(world, "deleteMessage", chat);
        if !exists(world, chat, message_id) {
            return Reply::bad_request("message to delete not found");
        }
        world.bot_texts.remove(&(chat, message_id));
        Reply::Ok(json!(true))
    })
}

/// Longest `callback_data`, in bytes.
const MAX_CALLBACK_DATA: usize = 64;
/// Longest callback answer text, in characters.
const MAX_CALLBACK_TEXT: usize = 200;

/// The `reply_markup` parameter: an inline keyboard whose buttons each have a text and
/// 1–64 bytes of `callback_data` (the only kind of button the fake takes), or nothing.
fn checked_markup(params: &Value) -> Result<Option<Value>, Reply> {
    let Some(markup) = structured(params, "reply_markup") else {
        return Ok(None);
    };
    let Some(rows) = markup["inline_keyboard"].as_array() else {
        return Err(Reply::bad_request(
            "can't parse reply keyboard markup JSON object",
        ));
    };
    for row in rows {
        let Some(buttons) = row.as_array() else {
            return Err(Reply::bad_request("can't parse inline keyboard button"));
        };
        for b in buttons {
            let text_ok = b["text"].as_str().is_some_and(|t| !t.trim().is_empty());
            let data_ok = b["callback_data"]
                .as_str()
                .is_some_and(|d| (1..=MAX_CALLBACK_DATA).contains(&d.len()));
            if !text_ok || !data_ok {
                return Err(Reply::bad_request("BUTTON_DATA_INVALID"));
            }
        }
    }
    if inline_buttons(Some(&markup)).is_empty() {
        return Ok(None);
    }
    Ok(Some(markup))
}

/// `answerCallbackQuery`: once per delivered query (Telegram refuses a second answer and an
/// unknown id).
pub(super) fn answer_callback_query(state: &State, params: &Value) -> Reply {
    let id = text(params, "callback_query_id").unwrap_or_default();
    let answer_text = text(params, "text");
    if answer_text
        .as_ref()
        .is_some_and(|t| t.chars().count() > MAX_CALLBACK_TEXT)
    {
        return Reply::bad_request("MESSAGE_TOO_LONG");
    }
    let show_alert = flag(params, "show_alert");
    state.change(|world| match world.callbacks.get_mut(&id) {
        Some(answered) if !*answered => {
            *answered = true;
            world.callback_answers.push(CallbackAnswer {
                callback_query_id: id,
                text: answer_text,
                show_alert,
            });
            Reply::Ok(json!(true))
        }
        _ => Reply::bad_request(
            "query is too old and response timeout expired or query ID is invalid",
        ),
    })
}

/// Whether a `sendMessage`/`editMessageText` call turned link previews off: its
/// `link_preview_options` (JSON, or JSON text in a form) has `is_disabled`, or the older
/// `disable_web_page_preview` is set.
fn preview_disabled(params: &Value) -> bool {
    let options = structured(params, "link_preview_options").unwrap_or(Value::Null);
    flag(&options, "is_disabled") || flag(params, "disable_web_page_preview")
}
