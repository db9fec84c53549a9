//! The interaction routes: the callback (first answer), follow-up messages, and the original
//! answer (read or edited) through the interaction's webhook.

use std::time::Instant;

use serde_json::Value;

use super::objects::{self, MessageParts};
use super::rest::Reply;
use super::routes::{check_content, checked_components, mentions};
use super::state::World;
use super::types::{Followup, FollowupKind, InteractionResponse, APPLICATION_ID};

/// `POST /interactions/{id}/{token}/callback`: once per interaction, within the deadline,
/// type 4 (message), 5 (deferred) or 9 (modal).
pub(super) fn callback(world: &mut World, id: Option<u64>, token: &str, body: &Value) -> Reply {
    let route = "createInteractionResponse";
    let Some((interaction_id, interaction)) =
        id.and_then(|id| Some((id, world.interactions.get(&id)?.clone())))
    else {
        world.violation(format!("{route}: unknown interaction {id:?}"));
        return Reply::error(404, 10062, "Unknown interaction");
    };
    if interaction.token != token {
        world.violation(format!(
            "{route}: wrong token for interaction {interaction_id}"
        ));
        return Reply::error(401, 50027, "Invalid Webhook Token");
    }
    if interaction.answered.is_some() {
        world.violation(format!(
            "{route}: interaction {interaction_id} answered twice"
        ));
        return Reply::error(400, 40060, "Interaction has already been acknowledged.");
    }
    let late = interaction
        .delivered
        .zip(world.interaction_deadline)
        .is_some_and(|(at, deadline)| at.elapsed() > deadline);
    if late {
        world.violation(format!(
            "{route}: interaction {interaction_id} answered after the deadline"
        ));
        return Reply::error(404, 10062, "Unknown interaction");
    }
    let kind = body["type"].as_u64().unwrap_or(0);
    let data = &body["data"];
    // A button press may also be answered by updating its message (7) or acknowledging it
    // (6); a command may not.
    let press = interaction.pressed;
    let mut components = None;
    let content = match (kind, press) {
        (4, _) => match check_content(world, route, data, false) {
            Ok(content) => content,
            Err(reply) => return reply,
        },
        (5 | 9, _) | (6, Some(_)) => data["content"].as_str().map(str::to_owned),
        (7, Some(message)) => {
            components = match checked_components(world, route, data) {
                Ok(c) => c,
                Err(reply) => return reply,
            };
            let content = data["content"].as_str().map(str::to_owned);
            if let Some((text, kept)) = world.bot_messages.get_mut(&message) {
                if let Some(c) = &content {
                    text.clone_from(c);
                }
                // `components` given (even empty) replaces them; absent keeps them.
                if data.get("components").is_some() {
                    kept.clone_from(&components);
                }
            }
            content
        }
        _ => {
            world.violation(format!(
                "{route}: callback type {kind} is not valid for this interaction"
            ));
            return Reply::invalid_form(
                "type",
                "BASE_TYPE_CHOICES",
                "Value must be one of (4, 5, 9), or (4, 5, 6, 7, 9) for a component.",
            );
        }
    };
    let flags = data["flags"].as_u64().unwrap_or(0);
    if let Some(interaction) = world.interactions.get_mut(&interaction_id) {
        interaction.answered = Some(kind);
    }
    world.interaction_responses.push(InteractionResponse {
        interaction_id,
        kind,
        content,
        ephemeral: flags & 64 != 0,
        components,
        at: Instant::now(),
    });
    Reply::no_content()
}

/// `POST /webhooks/{app}/{token}` and `GET`/`PATCH …/messages/@original`, after the callback.
pub(super) fn webhook(
    world: &mut World,
    route: &str,
    application: Option<u64>,
    token: &str,
    body: &Value,
) -> Reply {
    let found = world
        .interactions
        .iter()
        .find(|(_, interaction)| interaction.token == token)
        .map(|(id, interaction)| (*id, interaction.answered, interaction.channel));
    let Some((interaction_id, answered, channel_id)) =
        found.filter(|_| application == Some(APPLICATION_ID))
    else {
        world.violation(format!(
            "{route}: unknown webhook (application {application:?})"
        ));
        return Reply::error(404, 10015, "Unknown Webhook");
    };
    if answered.is_none() {
        world.violation(format!(
            "{route}: interaction {interaction_id} not answered yet"
        ));
        return Reply::error(404, 10015, "Unknown Webhook");
    }
    let editing = route != "createFollowupMessage";
    let content = if route == "getOriginalInteractionResponse" {
        world
            .followups
            .iter()
            .rev()
            .find(|f| f.interaction_id == interaction_id && f.kind == FollowupKind::EditOriginal)
            .and_then(|f| f.content.clone())
            .or_else(|| {
                world
                    .interaction_responses
                    .iter()
                    .find(|r| r.interaction_id == interaction_id)
                    .and_then(|r| r.content.clone())
            })
    } else {
        match check_content(world, route, body, editing) {
            Ok(content) => content,
            Err(reply) => return reply,
        }
    };
    let message_id = if editing {
        interaction_id
    } else {
        world.next_id()
    };
    if route != "getOriginalInteractionResponse" {
        world.followups.push(Followup {
            interaction_id,
            kind: if editing {
                FollowupKind::EditOriginal
            } else {
                FollowupKind::Create
            },
            content: content.clone(),
            message_id,
            at: Instant::now(),
        });
    }
    let text = content.unwrap_or_default();
    let mentions = mentions(world, &text);
    Reply::ok(objects::message(MessageParts {
        id: message_id,
        channel_id,
        guild_id: None,
        author: objects::bot_user(),
        content: &text,
        mentions,
        member: None,
        reply_to: None,
        webhook: true,
    }))
}
