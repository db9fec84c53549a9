//! Discord API objects as JSON (users, members, channels, guilds, messages, interactions),
//! shaped so serenity 0.12's models deserialize them: every field it does not default is here.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::types::{DUser, APPLICATION_ID, BOT_ID, BOT_USERNAME};

/// Milliseconds from the Unix epoch to the Discord epoch (2015-01-01).
const DISCORD_EPOCH_MS: u64 = 1_420_070_400_000;
/// A fixed `joined_at` for members: when the fake's users "joined" every guild.
const JOINED_AT: &str = "2024-01-01T00:00:00.000000+00:00";
/// Permissions of every member and of the bot in interactions: all of them.
pub(super) const ALL_PERMISSIONS: &str = "2251799813685247";

/// A snowflake as Discord writes it: a string.
pub(super) fn sf(id: u64) -> Value {
    Value::String(id.to_string())
}

/// Reads a snowflake written as a string or a number.
pub(super) fn read_sf(value: &Value) -> Option<u64> {
    match value {
        Value::String(text) => text.parse().ok(),
        Value::Number(number) => number.as_u64(),
        _ => None,
    }
}

/// Milliseconds since the Unix epoch.
pub(super) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
        })
}

/// The first snowflake the fake hands out: now, with a zero worker/sequence part.
pub(super) fn first_snowflake() -> u64 {
    unix_ms().saturating_sub(DISCORD_EPOCH_MS) << 22
}

/// Now as ISO 8601 with microseconds, as Discord writes `timestamp`.
pub(super) fn now_iso() -> String {
    let ms = unix_ms();
    let secs = ms / 1000;
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rest = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}+00:00",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        ms % 1000 * 1000
    )
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// A `User` object.
pub(super) fn user(user: &DUser) -> Value {
    json!({
        "id": sf(user.id),
        "username": user.username,
        "discriminator": "0",
        "global_name": user.username,
        "avatar": null,
        "bot": user.id == BOT_ID,
        "public_flags": 0,
    })
}

/// The bot's `User` object (READY, `GET /users/@me`, authors of its messages).
pub(super) fn bot_user() -> Value {
    let mut bot = user(&DUser::bot());
    bot["global_name"] = Value::Null;
    bot["verified"] = json!(true);
    bot["mfa_enabled"] = json!(false);
    bot["flags"] = json!(0);
    bot
}

/// A guild `Member` object; with `user` when `with_user` (interactions), without it in
/// `MESSAGE_CREATE`'s `member`.
pub(super) fn member(user_value: Option<Value>) -> Value {
    let mut member = json!({
        "roles": [],
        "joined_at": JOINED_AT,
        "premium_since": null,
        "nick": null,
        "avatar": null,
        "deaf": false,
        "mute": false,
        "flags": 0,
        "pending": false,
    });
    if let Some(user_value) = user_value {
        member["user"] = user_value;
        member["permissions"] = json!(ALL_PERMISSIONS);
        member["communication_disabled_until"] = Value::Null;
    }
    member
}

/// A guild text channel (type 0); `guild_id` is left out inside `GUILD_CREATE`.
pub(super) fn text_channel(id: u64, guild_id: Option<u64>, position: usize) -> Value {
    let mut channel = json!({
        "id": sf(id),
        "type": 0,
        "name": format!("channel-{id}"),
        "position": position,
        "permission_overwrites": [],
        "parent_id": null,
        "topic": null,
        "nsfw": false,
        "last_message_id": null,
        "rate_limit_per_user": 0,
        "flags": 0,
    });
    if let Some(guild_id) = guild_id {
        channel["guild_id"] = sf(guild_id);
    }
    channel
}

/// A public thread (type 11) under `parent_id`.
pub(super) fn thread(id: u64, guild_id: u64, parent_id: u64) -> Value {
    json!({
        "id": sf(id),
        "type": 11,
        "guild_id": sf(guild_id),
        "parent_id": sf(parent_id),
        "owner_id": sf(BOT_ID),
        "name": format!("thread-{id}"),
        "last_message_id": null,
        "message_count": 0,
        "member_count": 1,
        "rate_limit_per_user": 0,
        "flags": 0,
        "total_message_sent": 0,
        "thread_metadata": {
            "archived": false,
            "auto_archive_duration": 1440,
            "archive_timestamp": JOINED_AT,
            "locked": false,
            "create_timestamp": JOINED_AT,
        },
    })
}

/// A DM channel (type 1) with `recipient`.
pub(super) fn dm_channel(id: u64, recipient: &DUser) -> Value {
    json!({
        "id": sf(id),
        "type": 1,
        "last_message_id": null,
        "flags": 0,
        "recipients": [user(recipient)],
    })
}

/// A guild as `GUILD_CREATE` sends it: `channels` and `threads` as given, one member (the
/// bot), no roles but @everyone.
pub(super) fn guild(id: u64, name: &str, channels: Vec<Value>, threads: Vec<Value>) -> Value {
    let mut bot_member = member(Some(bot_user()));
    if let Some(object) = bot_member.as_object_mut() {
        object.remove("permissions");
    }
    let everyone = json!({
        "id": sf(id),
        "name": "@everyone",
        "color": 0,
        "colors": {"primary_color": 0, "secondary_color": null, "tertiary_color": null},
        "hoist": false,
        "icon": null,
        "unicode_emoji": null,
        "position": 0,
        "permissions": ALL_PERMISSIONS,
        "managed": false,
        "mentionable": false,
        "flags": 0,
    });
    let mut guild = json!({
        "id": sf(id),
        "name": name,
        "icon": null,
        "icon_hash": null,
        "splash": null,
        "discovery_splash": null,
        "owner_id": sf(1),
        "afk_channel_id": null,
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "roles": [everyone],
        "emojis": [],
        "features": [],
        "mfa_level": 0,
        "application_id": null,
        "system_channel_id": null,
        "system_channel_flags": 0,
        "rules_channel_id": null,
        "vanity_url_code": null,
        "description": null,
        "banner": null,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "preferred_locale": "en-US",
        "public_updates_channel_id": null,
        "nsfw_level": 0,
        "stickers": [],
        "premium_progress_bar_enabled": false,
        "safety_alerts_channel_id": null,
    });
    // The GUILD_CREATE extras.
    let extras = json!({
        "joined_at": JOINED_AT,
        "large": false,
        "unavailable": false,
        "member_count": 1,
        "voice_states": [],
        "members": [bot_member],
        "channels": channels,
        "threads": threads,
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
    });
    if let (Some(guild), Value::Object(extras)) = (guild.as_object_mut(), extras) {
        guild.extend(extras);
    }
    guild
}

/// The user ids a text mentions as `<@ID>` or `<@!ID>`, in order, without repeats.
pub(super) fn mentioned_ids(content: &str) -> Vec<u64> {
    let mut ids = Vec::new();
    for piece in content.split("<@").skip(1) {
        let piece = piece.strip_prefix('!').unwrap_or(piece);
        let Some((digits, _)) = piece.split_once('>') else {
            continue;
        };
        if let Ok(id) = digits.parse::<u64>() {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// What a `Message` object is built from.
pub(super) struct MessageParts<'a> {
    pub(super) id: u64,
    pub(super) channel_id: u64,
    /// Set for gateway messages in a guild (REST answers leave it out, as Discord does).
    pub(super) guild_id: Option<u64>,
    pub(super) author: Value,
    pub(super) content: &'a str,
    pub(super) mentions: Vec<Value>,
    /// `member` of the author, for gateway messages in a guild.
    pub(super) member: Option<Value>,
    pub(super) reply_to: Option<u64>,
    /// Set for interaction follow-ups (`webhook_id` and `application_id`).
    pub(super) webhook: bool,
}

/// A `Message` object.
pub(super) fn message(parts: MessageParts<'_>) -> Value {
    let mut message = json!({
        "id": sf(parts.id),
        "channel_id": sf(parts.channel_id),
        "author": parts.author,
        "content": parts.content,
        "timestamp": now_iso(),
        "edited_timestamp": null,
        "tts": false,
        "mention_everyone": false,
        "mentions": parts.mentions,
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "components": [],
        "pinned": false,
        "type": if parts.reply_to.is_some() { 19 } else { 0 },
        "flags": 0,
    });
    if let Some(guild_id) = parts.guild_id {
        message["guild_id"] = sf(guild_id);
    }
    if let Some(member) = parts.member {
        message["member"] = member;
    }
    if let Some(replied) = parts.reply_to {
        message["message_reference"] = json!({
            "type": 0,
            "message_id": sf(replied),
            "channel_id": sf(parts.channel_id),
        });
    }
    if parts.webhook {
        message["webhook_id"] = sf(APPLICATION_ID);
        message["application_id"] = sf(APPLICATION_ID);
    }
    message
}

/// What an application command interaction is built from.
pub(super) struct CommandParts<'a> {
    pub(super) id: u64,
    pub(super) token: &'a str,
    pub(super) guild_id: Option<u64>,
    pub(super) channel: Value,
    pub(super) user: &'a DUser,
    pub(super) command_id: u64,
    pub(super) name: &'a str,
    pub(super) options: &'a [(&'a str, &'a str)],
}

/// An `INTERACTION_CREATE` payload for a slash command (type 2) with string options.
pub(super) fn command_interaction(parts: CommandParts<'_>) -> Value {
    let options: Vec<Value> = parts
        .options
        .iter()
        .map(|(name, value)| json!({"name": name, "type": 3, "value": value}))
        .collect();
    let channel_id = parts.channel["id"].clone();
    let owner = parts.guild_id.map_or_else(|| sf(parts.user.id), sf);
    let mut interaction = json!({
        "id": sf(parts.id),
        "application_id": sf(APPLICATION_ID),
        "type": 2,
        "token": parts.token,
        "version": 1,
        "channel_id": channel_id,
        "channel": parts.channel,
        "app_permissions": ALL_PERMISSIONS,
        "locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": owner},
        "attachment_size_limit": 10_485_760,
        "data": {
            "id": sf(parts.command_id),
            "name": parts.name,
            "type": 1,
            "options": options,
        },
    });
    match parts.guild_id {
        Some(guild_id) => {
            interaction["guild_id"] = sf(guild_id);
            interaction["guild_locale"] = json!("en-US");
            interaction["member"] = member(Some(user(parts.user)));
            interaction["context"] = json!(0);
            interaction["data"]["guild_id"] = sf(guild_id);
        }
        None => {
            interaction["user"] = user(parts.user);
            interaction["context"] = json!(1);
        }
    }
    interaction
}

/// READY's `d`.
pub(super) fn ready(session_id: &str, resume_url: &str, guilds: &[u64], shard: &Value) -> Value {
    let guilds: Vec<Value> = guilds
        .iter()
        .map(|id| json!({"id": sf(*id), "unavailable": true}))
        .collect();
    let mut ready = json!({
        "v": 10,
        "user": bot_user(),
        "guilds": guilds,
        "session_id": session_id,
        "session_type": "normal",
        "resume_gateway_url": resume_url,
        "private_channels": [],
        "relationships": [],
        "user_settings": {},
        "presences": [],
        "guild_join_requests": [],
        "geo_ordered_rtc_regions": ["us-east"],
        "application": {"id": sf(APPLICATION_ID), "flags": 0},
        "_trace": ["[\"fake-discord\"]"],
    });
    if shard.is_array() {
        ready["shard"] = shard.clone();
    }
    ready
}

/// `GET /oauth2/applications/@me`.
pub(super) fn application() -> Value {
    json!({
        "id": sf(APPLICATION_ID),
        "name": BOT_USERNAME,
        "icon": null,
        "description": "",
        "summary": "",
        "type": null,
        "bot_public": true,
        "bot_require_code_grant": false,
        "verify_key": "0000000000000000000000000000000000000000000000000000000000000000",
        "team": null,
        "flags": 0,
        "owner": user(&DUser::new(1, "owner")),
        "bot": bot_user(),
        "redirect_uris": [],
        "interactions_endpoint_url": null,
        "integration_types_config": {"0": {}},
    })
}
