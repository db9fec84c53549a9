//! The REST routes' answers: messages, typing, channels, DMs, application commands,
//! interaction callbacks and follow-ups.

use std::time::Instant;

use serde_json::{json, Value};

use super::interactions;
use super::objects::{self, read_sf, sf, MessageParts};
use super::rest::Reply;
use super::state::{State, World};
use super::types::{RegisteredCommand, SentMessage, APPLICATION_ID, MAX_CONTENT_CHARS};

/// Answers a matched, authorized route.
pub(super) fn dispatch(state: &State, name: &str, captures: &[String], body: &Value) -> Reply {
    let id = |index: usize| {
        captures
            .get(index)
            .and_then(|text| text.parse::<u64>().ok())
    };
    let text = |index: usize| captures.get(index).map_or("", String::as_str);
    state.change(|world| match name {
        "getGateway" => Reply::ok(json!({"url": state.gateway_url})),
        "getGatewayBot" => Reply::ok(json!({
            "url": state.gateway_url,
            "shards": 1,
            "session_start_limit": {
                "total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1,
            },
        })),
        "getCurrentUser" => Reply::ok(objects::bot_user()),
        "getCurrentApplication" => Reply::ok(objects::application()),
        "createDm" => create_dm(world, body),
        "getChannel" => match id(0).and_then(|channel| world.channel_json(channel)) {
            Some(channel) => Reply::ok(channel),
            None => Reply::error(404, 10003, "Unknown Channel"),
        },
        "createMessage" => create_message(world, id(0), body),
        "editMessage" => super::edits::edit_message(world, id(0), id(1), body),
        "triggerTyping" => match id(0).filter(|channel| world.channels.contains_key(channel)) {
            Some(channel) => {
                world.typing.push(channel);
                Reply::no_content()
            }
            None => unknown_channel(world, name, text(0)),
        },
        "getGlobalCommands" | "getGuildCommands" => {
            let guild = if name == "getGuildCommands" {
                id(1)
            } else {
                None
            };
            check_application(world, name, text(0));
            let commands: Vec<Value> = world
                .commands
                .iter()
                .filter(|command| command.guild_id == guild)
                .map(command_json)
                .collect();
            Reply::ok(Value::Array(commands))
        }
        "bulkOverwriteGlobalCommands" | "bulkOverwriteGuildCommands" => {
            let guild = if name == "bulkOverwriteGuildCommands" {
                id(1)
            } else {
                None
            };
            check_application(world, name, text(0));
            overwrite_commands(world, guild, body)
        }
        "createGlobalCommand" | "createGuildCommand" => {
            let guild = if name == "createGuildCommand" {
                id(1)
            } else {
                None
            };
            check_application(world, name, text(0));
            match checked_command(world, guild, body) {
                Ok(command) => {
                    let reply = command_json(&command);
                    world
                        .commands
                        .retain(|old| !(old.guild_id == guild && old.name == command.name));
                    world.commands.push(command);
                    Reply::ok(reply)
                }
                Err(reply) => reply,
            }
        }
        "createInteractionResponse" => interactions::callback(world, id(0), text(1), body),
        "createFollowupMessage"
        | "getOriginalInteractionResponse"
        | "editOriginalInteractionResponse" => {
            interactions::webhook(world, name, id(0), text(1), body)
        }
        _ => {
            world.violation(format!("no handler for route {name}"));
            Reply::error(404, 0, "404: Not Found")
        }
    })
}

fn unknown_channel(world: &mut World, route: &str, channel: &str) -> Reply {
    world.violation(format!("{route} to unknown channel {channel}"));
    Reply::error(404, 10003, "Unknown Channel")
}

fn check_application(world: &mut World, route: &str, application: &str) {
    if application != APPLICATION_ID.to_string() {
        world.violation(format!(
            "{route} for application {application}, not {APPLICATION_ID}"
        ));
    }
}

/// Checks `content` as Discord does for a message: at most 2000 characters, and not empty
/// unless something else (embeds, attachments, stickers, components, a poll) is sent.
pub(super) fn check_content(
    world: &mut World,
    route: &str,
    body: &Value,
    editing: bool,
) -> Result<Option<String>, Reply> {
    let content = match &body["content"] {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => {
            world.violation(format!("{route}: content is not a string: {other}"));
            return Err(Reply::invalid_form(
                "content",
                "BASE_TYPE_STRING",
                "Must be a string.",
            ));
        }
    };
    let chars = content.as_deref().map_or(0, |text| text.chars().count());
    if chars > MAX_CONTENT_CHARS {
        world.violation(format!(
            "{route}: content of {chars} characters (limit {MAX_CONTENT_CHARS})"
        ));
        return Err(Reply::invalid_form(
            "content",
            "BASE_TYPE_MAX_LENGTH",
            "Must be 2000 or fewer in length.",
        ));
    }
    let other = ["embeds", "attachments", "sticker_ids", "components", "poll"]
        .iter()
        .any(|key| {
            body[key]
                .as_array()
                .map_or(!body[key].is_null(), |items| !items.is_empty())
        });
    if chars == 0 && !other && !editing {
        world.violation(format!("{route}: empty message"));
        return Err(Reply::error(400, 50006, "Cannot send an empty message"));
    }
    Ok(content)
}

fn create_message(world: &mut World, channel: Option<u64>, body: &Value) -> Reply {
    let Some(channel_id) = channel.filter(|channel| world.channels.contains_key(channel)) else {
        let shown = channel.map_or_else(|| "?".to_owned(), |c| c.to_string());
        return unknown_channel(world, "createMessage", &shown);
    };
    let content = match check_content(world, "createMessage", body, false) {
        Ok(content) => content.unwrap_or_default(),
        Err(reply) => return reply,
    };
    let reply_to = read_sf(&body["message_reference"]["message_id"]);
    let components = match checked_components(world, "createMessage", body) {
        Ok(c) => c,
        Err(reply) => return reply,
    };
    let attachments = match super::files::take_uploads(world, body) {
        Ok(a) => a,
        Err(reply) => return reply,
    };
    let message_id = world.next_id();
    let mentions = mentions(world, &content);
    world
        .bot_messages
        .insert(message_id, (content.clone(), components.clone()));
    world.sent.push(SentMessage {
        channel_id,
        content: content.clone(),
        message_id,
        reply_to,
        allowed_mentions: body.get("allowed_mentions").cloned(),
        components,
        flags: body.get("flags").and_then(Value::as_u64).unwrap_or(0),
        attachments,
        at: Instant::now(),
    });
    Reply::ok(objects::message(MessageParts {
        id: message_id,
        channel_id,
        guild_id: None,
        author: objects::bot_user(),
        content: &content,
        mentions,
        member: None,
        reply_to,
        webhook: false,
    }))
}

/// The `User` objects a text mentions.
pub(super) fn mentions(world: &World, content: &str) -> Vec<Value> {
    objects::mentioned_ids(content)
        .into_iter()
        .map(|id| objects::user(&world.user(id)))
        .collect()
}

fn create_dm(world: &mut World, body: &Value) -> Reply {
    let Some(user_id) = read_sf(&body["recipient_id"]) else {
        world.violation(format!("createDm without recipient_id: {body}"));
        return Reply::invalid_form(
            "recipient_id",
            "BASE_TYPE_REQUIRED",
            "This field is required",
        );
    };
    let user = world.user(user_id);
    let channel = world.dm_channel(&user);
    Reply::ok(world.channel_json(channel).unwrap_or(Value::Null))
}

fn command_json(command: &RegisteredCommand) -> Value {
    let mut value = json!({
        "id": sf(command.id),
        "application_id": sf(APPLICATION_ID),
        "version": sf(command.id),
        "type": 1,
        "name": command.name,
        "description": command.description,
        "options": command.options,
        "default_member_permissions": null,
        "nsfw": false,
        "integration_types": [0],
        "contexts": null,
    });
    if let Some(guild) = command.guild_id {
        value["guild_id"] = sf(guild);
    }
    value
}

/// A command as Discord validates it: lowercase name of 1–32 characters, description of
/// 1–100, options with name/description/type and required ones first.
fn checked_command(
    world: &mut World,
    guild: Option<u64>,
    body: &Value,
) -> Result<RegisteredCommand, Reply> {
    let name = body["name"].as_str().unwrap_or("");
    let kind = body["type"].as_u64().unwrap_or(1);
    let description = body["description"].as_str().unwrap_or("");
    let good_name = |name: &str| {
        (1..=32).contains(&name.chars().count())
            && name
                .chars()
                .all(|c| c == '-' || c == '_' || c.is_lowercase() || c.is_numeric())
    };
    let options = body["options"].as_array().cloned().unwrap_or_default();
    let mut problem = None;
    if !good_name(name) {
        problem = Some(("name", format!("bad command name {name:?}")));
    } else if kind == 1 && !(1..=100).contains(&description.chars().count()) {
        problem = Some((
            "description",
            format!("/{name}: description must be 1-100 characters"),
        ));
    }
    let mut optional_seen = false;
    for option in &options {
        let option_name = option["name"].as_str().unwrap_or("");
        if !good_name(option_name)
            || option["type"].as_u64().is_none()
            || option["description"].as_str().is_none_or(str::is_empty)
        {
            problem = Some(("options", format!("/{name}: bad option {option}")));
        }
        let required = option["required"].as_bool().unwrap_or(false);
        if required && optional_seen {
            problem = Some((
                "options",
                format!("/{name}: required option {option_name} after an optional one"),
            ));
        }
        optional_seen |= !required;
    }
    if let Some((field, text)) = problem {
        world.violation(format!("command registration: {text}"));
        return Err(Reply::invalid_form(
            field,
            "APPLICATION_COMMAND_INVALID",
            &text,
        ));
    }
    let id = world
        .commands
        .iter()
        .find(|old| old.guild_id == guild && old.name == name)
        .map(|old| old.id);
    let id = id.unwrap_or_else(|| world.next_id());
    Ok(RegisteredCommand {
        id,
        guild_id: guild,
        name: name.to_owned(),
        description: description.to_owned(),
        options,
    })
}

fn overwrite_commands(world: &mut World, guild: Option<u64>, body: &Value) -> Reply {
    let Some(items) = body.as_array() else {
        world.violation(format!(
            "command overwrite with a non-array body: {body:.200}"
        ));
        return Reply::invalid_form("_", "BASE_TYPE_ARRAY", "Must be an array.");
    };
    let mut commands = Vec::new();
    for item in items {
        match checked_command(world, guild, item) {
            Ok(command)
                if commands
                    .iter()
                    .any(|c: &RegisteredCommand| c.name == command.name) =>
            {
                world.violation(format!("command overwrite names /{} twice", command.name));
                return Reply::invalid_form(
                    "_",
                    "APPLICATION_COMMANDS_DUPLICATE_NAME",
                    "Application command names must be unique",
                );
            }
            Ok(command) => commands.push(command),
            Err(reply) => return reply,
        }
    }
    world.commands.retain(|old| old.guild_id != guild);
    world.commands.extend(commands.iter().cloned());
    Reply::ok(Value::Array(commands.iter().map(command_json).collect()))
}

/// Discord's bounds on buttons.
const MAX_ROWS: usize = 5;
const MAX_BUTTONS_PER_ROW: usize = 5;
const MAX_LABEL_CHARS: usize = 80;
const MAX_CUSTOM_ID_CHARS: usize = 100;

/// The `components` of a message body: action rows (type 1) of at most five buttons (type
/// 2, style 1–4 with a label and a `custom_id` of 1–100 characters). Anything else is
/// refused as Discord refuses it (50035) and recorded as a violation.
pub(super) fn checked_components(
    world: &mut World,
    route: &str,
    body: &Value,
) -> Result<Option<Value>, Reply> {
    let components = match body.get("components") {
        None | Some(Value::Null) => return Ok(None),
        Some(c) => c.clone(),
    };
    let valid_button = |b: &Value| {
        let label = b["label"].as_str().map_or(0, |l| l.chars().count());
        let id = b["custom_id"].as_str().map_or(0, |i| i.chars().count());
        b["type"] == 2
            && b["style"].as_u64().is_some_and(|s| (1..=4).contains(&s))
            && (1..=MAX_LABEL_CHARS).contains(&label)
            && (1..=MAX_CUSTOM_ID_CHARS).contains(&id)
    };
    let valid = components.as_array().is_some_and(|rows| {
        rows.len() <= MAX_ROWS
            && rows.iter().all(|row| {
                row["type"] == 1
                    && row["components"].as_array().is_some_and(|buttons| {
                        (1..=MAX_BUTTONS_PER_ROW).contains(&buttons.len())
                            && buttons.iter().all(valid_button)
                    })
            })
    });
    if !valid {
        world.violation(format!("{route}: invalid components {components}"));
        return Err(Reply::invalid_form(
            "components",
            "COMPONENT_INVALID",
            "Invalid Form Body",
        ));
    }
    Ok(components
        .as_array()
        .filter(|r| !r.is_empty())
        .map(|_| components.clone()))
}
