//! Button presses: a test presses a button of a bot message, which arrives as an
//! `INTERACTION_CREATE` of type 3 (`MESSAGE_COMPONENT`) carrying the message as it stands;
//! the callback (types 6 and 7 besides 4/5/9) is checked in `interactions.rs`.

use anyhow::Context as _;
use serde_json::{json, Value};

use super::objects::{self, member, sf, user, MessageParts, ALL_PERMISSIONS};
use super::state::Interaction;
use super::types::{DUser, APPLICATION_ID};
use super::FakeDiscord;

impl FakeDiscord {
    /// `user` presses the button `custom_id` on bot message `message_id` (in a guild
    /// channel, or a DM with `guild_id: None`): pushes INTERACTION_CREATE of type 3
    /// (`MESSAGE_COMPONENT`) carrying the message as it stands. Returns the interaction id,
    /// or an error when the message has no such button (Discord sends presses of real
    /// buttons only).
    pub fn press_button(
        &self,
        guild_id: Option<u64>,
        user: DUser,
        message_id: u64,
        custom_id: &str,
    ) -> anyhow::Result<u64> {
        self.inner.state.change(|world| {
            let (content, components) = world
                .bot_messages
                .get(&message_id)
                .cloned()
                .with_context(|| format!("no bot message {message_id}"))?;
            if !super::types::buttons(components.as_ref())
                .iter()
                .any(|(_, id)| id == custom_id)
            {
                anyhow::bail!("message {message_id} has no button {custom_id:?}");
            }
            let channel_id = world
                .sent
                .iter()
                .find(|m| m.message_id == message_id)
                .map(|m| m.channel_id)
                .with_context(|| format!("message {message_id} was not sent by the bot"))?;
            world.remember_user(&user);
            let id = world.next_id();
            let token = format!("fake-interaction-{id}-{}", uuid::Uuid::new_v4().simple());
            let channel = world
                .channel_json(channel_id)
                .unwrap_or_else(|| json!({"id": sf(channel_id), "type": 0}));
            let mut message = objects::message(MessageParts {
                id: message_id,
                channel_id,
                guild_id,
                author: objects::bot_user(),
                content: &content,
                mentions: Vec::new(),
                member: None,
                reply_to: None,
                webhook: false,
            });
            message["components"] = components.unwrap_or_else(|| json!([]));
            let interaction = component_interaction(PressParts {
                id,
                token: &token,
                guild_id,
                channel,
                user: &user,
                message,
                custom_id,
            });
            world.interactions.insert(
                id,
                Interaction {
                    token,
                    channel: channel_id,
                    delivered: None,
                    answered: None,
                    pressed: Some(message_id),
                },
            );
            world.push_dispatch("INTERACTION_CREATE", interaction);
            Ok(id)
        })
    }

    /// A bot message's content and components as they stand now (after type 7 updates).
    pub fn bot_message(&self, message_id: u64) -> Option<(String, Option<Value>)> {
        self.inner
            .state
            .read(|world| world.bot_messages.get(&message_id).cloned())
    }
}

/// What a button press (a component interaction) is built from.
struct PressParts<'a> {
    id: u64,
    token: &'a str,
    guild_id: Option<u64>,
    channel: Value,
    user: &'a DUser,
    /// The bot message the button is on, components included.
    message: Value,
    custom_id: &'a str,
}

/// An `INTERACTION_CREATE` payload for a button press (type 3, `MESSAGE_COMPONENT`).
fn component_interaction(parts: PressParts<'_>) -> Value {
    let channel_id = parts.channel["id"].clone();
    let owner = parts.guild_id.map_or_else(|| sf(parts.user.id), sf);
    let mut interaction = json!({
        "id": sf(parts.id),
        "application_id": sf(APPLICATION_ID),
        "type": 3,
        "token": parts.token,
        "version": 1,
        "channel_id": channel_id,
        "channel": parts.channel,
        "app_permissions": ALL_PERMISSIONS,
        "locale": "en-US",
        "entitlements": [],
        "authorizing_integration_owners": {"0": owner},
        "attachment_size_limit": 10_485_760,
        "message": parts.message,
        "data": {"custom_id": parts.custom_id, "component_type": 2},
    });
    match parts.guild_id {
        Some(guild_id) => {
            interaction["guild_id"] = sf(guild_id);
            interaction["guild_locale"] = json!("en-US");
            interaction["member"] = member(Some(user(parts.user)));
            interaction["context"] = json!(0);
        }
        None => {
            interaction["user"] = user(parts.user);
            interaction["context"] = json!(1);
        }
    }
    interaction
}
