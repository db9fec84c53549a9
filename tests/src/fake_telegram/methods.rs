//! The Bot API methods the fake knows, by canonical name, and the small ones' answers
//! (`getMe`, chat actions, the command menu, webhook settings).

use std::sync::Arc;

use serde_json::{json, Value};

use super::messages::{self, chat_id};
use super::polling;
use super::state::State;
use super::types::{User, Webhook};
use super::wire::{flag, structured, text, Reply};

/// Methods the fake answers, spelled canonically (Telegram matches names case-insensitively).
const METHODS: &[&str] = &[
    "getMe",
    "getUpdates",
    "sendMessage",
    "sendChatAction",
    "editMessageText",
    "answerCallbackQuery",
    "deleteMessage",
    "setMyCommands",
    "getMyCommands",
    "deleteMyCommands",
    "setWebhook",
    "deleteWebhook",
    "getWebhookInfo",
    "getFile",
    "sendPhoto",
    "sendDocument",
];

/// Chat actions `sendChatAction` accepts.
const CHAT_ACTIONS: &[&str] = &[
    "typing",
    "upload_photo",
    "record_video",
    "upload_video",
    "record_voice",
    "upload_voice",
    "upload_document",
    "choose_sticker",
    "find_location",
    "record_video_note",
    "upload_video_note",
];

/// Bot API bounds on the command menu.
const MAX_COMMANDS: usize = 100;
const MAX_COMMAND_CHARS: usize = 32;
const MAX_DESCRIPTION_CHARS: usize = 256;

/// The canonical name of a method (`GetUpdates` → `getUpdates`) and whether the fake knows it;
/// unknown names get their first letter lowercased.
pub(super) fn canonical(name: &str) -> (String, bool) {
    match METHODS
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name))
    {
        Some(known) => ((*known).to_owned(), true),
        None => {
            let mut chars = name.chars();
            let lowered = chars
                .next()
                .map(|first| first.to_ascii_lowercase().to_string() + chars.as_str())
                .unwrap_or_default();
            (lowered, false)
        }
    }
}

/// Answers a call of known method `method` (canonical name).
pub(super) async fn dispatch(
    state: &Arc<State>,
    method: &str,
    params: &Value,
    arrived: tokio::time::Instant,
    uploads: &[crate::multipart::Part],
) -> Reply {
    match method {
        "getFile" => super::files::get_file(state, params),
        "sendPhoto" | "sendDocument" => super::files::send_file(state, method, params, uploads),
        "getMe" => get_me(),
        "getUpdates" => polling::get_updates(state, params, arrived).await,
        "sendMessage" => messages::send_message(state, params),
        "editMessageText" => messages::edit_message_text(state, params),
        "deleteMessage" => messages::delete_message(state, params),
        "answerCallbackQuery" => messages::answer_callback_query(state, params),
        "sendChatAction" => send_chat_action(state, params),
        "setMyCommands" => set_my_commands(state, params),
        "getMyCommands" => Reply::Ok(state.read(|world| {
            world
                .commands
                .iter()
                .map(|(command, description)| json!({"command": command, "description": description}))
                .collect()
        })),
        "deleteMyCommands" => {
            state.change(|world| world.commands.clear());
            Reply::Ok(json!(true))
        }
        "setWebhook" => set_webhook(state, params),
        "deleteWebhook" => {
            let drop_pending = flag(params, "drop_pending_updates");
            state.change(|world| {
                world.webhook = None;
                if drop_pending {
                    world.updates.clear();
                }
            });
            Reply::Ok(json!(true))
        }
        "getWebhookInfo" => Reply::Ok(state.read(|world| {
            json!({
                "url": world.webhook.as_ref().map_or("", |webhook| webhook.url.as_str()),
                "has_custom_certificate": false,
                "pending_update_count": world.updates.len(),
            })
        })),
        other => {
            // `canonical` only marks the names above as known.
            Reply::error(404, format!("Not Found: method {other} is not implemented"))
        }
    }
}

fn get_me() -> Reply {
    let mut me = User::bot().to_json();
    me["can_join_groups"] = json!(true);
    me["can_read_all_group_messages"] = json!(false);
    me["supports_inline_queries"] = json!(false);
    me["can_connect_to_business"] = json!(false);
    me["has_main_web_app"] = json!(false);
    Reply::Ok(me)
}

fn send_chat_action(state: &State, params: &Value) -> Reply {
    let chat = match chat_id(params) {
        Ok(chat) => chat,
        Err(reply) => return reply,
    };
    let action = text(params, "action").unwrap_or_default();
    if !CHAT_ACTIONS.contains(&action.as_str()) {
        return Reply::bad_request("wrong parameter action in request");
    }
    state.change(|world| {
        messages::check_known_chat(world, "sendChatAction", chat);
        world.chat_actions.push((chat, action));
    });
    Reply::Ok(json!(true))
}

fn set_my_commands(state: &State, params: &Value) -> Reply {
    let Some(Value::Array(items)) = structured(params, "commands") else {
        return Reply::bad_request("parameter \"commands\" is required and must be an array");
    };
    if items.len() > MAX_COMMANDS {
        return Reply::bad_request("too many commands");
    }
    let mut commands = Vec::with_capacity(items.len());
    for item in &items {
        let command = text(item, "command").unwrap_or_default();
        let description = text(item, "description").unwrap_or_default();
        let valid_command = (1..=MAX_COMMAND_CHARS).contains(&command.chars().count())
            && command
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_');
        if !valid_command {
            return Reply::bad_request("BOT_COMMAND_INVALID");
        }
        if !(1..=MAX_DESCRIPTION_CHARS).contains(&description.trim().chars().count()) {
            return Reply::bad_request("BOT_COMMAND_DESCRIPTION_INVALID");
        }
        commands.push((command, description));
    }
    state.change(|world| world.commands = commands);
    Reply::Ok(json!(true))
}

fn set_webhook(state: &State, params: &Value) -> Reply {
    let url = text(params, "url").unwrap_or_default();
    let secret_token = text(params, "secret_token");
    let drop_pending = flag(params, "drop_pending_updates");
    let allowed_updates = match structured(params, "allowed_updates") {
        Some(Value::Array(kinds)) => Some(
            kinds
                .iter()
                .filter_map(|kind| kind.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    };
    state.change(|world| {
        // An empty URL removes the webhook, as on Telegram.
        world.webhook = (!url.is_empty()).then_some(Webhook {
            url,
            secret_token,
            allowed_updates,
        });
        if drop_pending {
            world.updates.clear();
        }
    });
    Reply::Ok(json!(true))
}
