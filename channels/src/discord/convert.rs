//! Discord message / application command → [`InboundMessage`]: pure, so it can be
//! property-tested apart from serenity's event loop.

use serenity::all::{
    ChannelId, CommandDataOption, CommandDataOptionValue, CommandInteraction, ComponentInteraction,
    GuildId, Message, User,
};

use super::{BotInfo, CHANNEL_ID};
use crate::{ChatKind, InboundMessage, MenuCommand, Origin, Press};

/// A message for the gateway, unless it is from a bot or has neither text nor attachments.
/// In a guild it is addressed when it mentions or answers the bot, or is typed as one of
/// `menu`'s commands (not any text that starts with `/`).
pub(super) fn message(msg: &Message, me: BotInfo, menu: &[MenuCommand]) -> Option<InboundMessage> {
    let media = super::media::attachments_of(msg);
    // An attachment without text is a message too.
    if msg.author.bot || (msg.content.trim().is_empty() && media.is_empty()) {
        return None;
    }
    let direct = msg.guild_id.is_none();
    let mentioned = msg.mentions.iter().any(|u| u.id.get() == me.user_id);
    let replied_to_us = msg
        .referenced_message
        .as_ref()
        .is_some_and(|r| r.author.id.get() == me.user_id);
    let text = without_mentions(&msg.content, me.user_id);
    Some(InboundMessage {
        addressed: direct
            || mentioned
            || replied_to_us
            || crate::command_in(menu, &text, None).is_some(),
        press: None,
        media,
        text,
        message_id: Some(msg.id.get().to_string()),
        ..from(msg.guild_id, msg.channel_id, &msg.author, None)
    })
}

/// An application command as the slash command text routing reads, answered through
/// `reply_handle`.
pub(super) fn command(
    cmd: &CommandInteraction,
    reply_handle: String,
    menu: &[MenuCommand],
) -> InboundMessage {
    InboundMessage {
        addressed: true,
        text: command_text(cmd, menu),
        message_id: Some(format!("interaction:{}", cmd.id.get())),
        ..from(cmd.guild_id, cmd.channel_id, &cmd.user, Some(reply_handle))
    }
}

/// A press of a button (a message component) on one of the bot's messages: the presser is
/// the sender, the message's channel the origin; `None` for another bot's message or a
/// presser that is a bot.
pub(super) fn press(comp: &ComponentInteraction, me: BotInfo) -> Option<InboundMessage> {
    if comp.user.bot || comp.message.author.id.get() != me.user_id {
        return None;
    }
    Some(InboundMessage {
        addressed: true,
        press: Some(Press {
            action: comp.data.custom_id.clone(),
            message_id: Some(comp.message.id.get().to_string()),
        }),
        media: Vec::new(),
        message_id: Some(format!("interaction:{}", comp.id.get())),
        ..from(comp.guild_id, comp.channel_id, &comp.user, None)
    })
}

/// `content` without the bot's mention tags (`<@id>`, `<@!id>`), trimmed. Cutting one can
/// join its neighbours into another ("<@<@id>id>"): cut until none is left.
/// What every inbound from Discord shares: the origin (a DM without a guild, else a
/// group; answered through `reply_handle` when given) and the sender. The caller sets
/// the text, whether it is addressed, the message id and a press.
fn from(
    guild: Option<GuildId>,
    channel: ChannelId,
    sender: &User,
    reply_handle: Option<String>,
) -> InboundMessage {
    InboundMessage {
        origin: Origin {
            channel: CHANNEL_ID.to_string(),
            account: guild.map(|g| g.get().to_string()),
            chat_id: channel.get().to_string(),
            thread_id: None,
            kind: if guild.is_none() {
                ChatKind::Direct
            } else {
                ChatKind::Group
            },
            reply_handle,
        },
        sender_id: sender.id.get().to_string(),
        sender_name: Some(display_name(sender)),
        sender_username: Some(sender.name.clone()),
        addressed: false,
        press: None,
        media: Vec::new(),
        text: String::new(),
        message_id: None,
    }
}

fn without_mentions(content: &str, bot: u64) -> String {
    let forms = [format!("<@{bot}>"), format!("<@!{bot}>")];
    let mut text = content.to_string();
    while let Some(form) = forms.iter().find(|f| text.contains(f.as_str())) {
        text = text.replace(form.as_str(), "");
    }
    text.trim().to_string()
}

/// The name people see: the global display name, else the username.
fn display_name(user: &User) -> String {
    user.global_name
        .clone()
        .unwrap_or_else(|| user.name.clone())
}

/// `/subagents action:send target:1 message:hi` → "/subagents send 1 hi": the option
/// values in the order the menu lists the command's options (for a command the menu does
/// not have, in the order Discord sent them).
fn command_text(cmd: &CommandInteraction, menu: &[MenuCommand]) -> String {
    let value = |o: &CommandDataOption| match &o.value {
        CommandDataOptionValue::String(s) => Some(s.clone()),
        CommandDataOptionValue::Integer(i) => Some(i.to_string()),
        _ => None,
    };
    let options = &cmd.data.options;
    let values: Vec<String> = match menu.iter().find(|c| c.name == cmd.data.name) {
        Some(entry) => entry
            .options
            .iter()
            .filter_map(|want| options.iter().find(|o| o.name == want.name))
            .filter_map(value)
            .collect(),
        None => options.iter().filter_map(value).collect(),
    };
    let mut text = format!("/{}", cmd.data.name);
    for v in values {
        text.push(' ');
        text.push_str(&v);
    }
    text
}

#[cfg(test)]
#[path = "convert_tests.rs"]
mod tests;
