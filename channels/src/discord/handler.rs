//! serenity events → the gateway: READY (identity, command registration), messages, and
//! application-command interactions.

use std::sync::Arc;

use async_trait::async_trait;
use serenity::all::{
    Command, CommandDataOptionValue, CommandInteraction, CommandOptionType, Context, CreateCommand,
    CreateCommandOption, EventHandler, Interaction, Message, Ready, ResumedEvent,
};

use super::{BotInfo, Inner, CHANNEL_ID};
use crate::{ChatKind, Inbound, InboundMessage, InboundSink, Origin};

pub(super) struct Handler {
    pub(super) inner: Arc<Inner>,
    pub(super) sink: InboundSink,
}

/// The `/subagents` actions offered as choices.
const ACTIONS: &[&str] = &["list", "stop", "log", "info", "send"];

fn commands(menu: &[(String, String)]) -> Vec<CreateCommand> {
    menu.iter()
        .map(|(name, desc)| {
            let cmd = CreateCommand::new(name).description(desc);
            if name == "subagents" {
                let mut action =
                    CreateCommandOption::new(CommandOptionType::String, "action", "What to do")
                        .required(true);
                for a in ACTIONS {
                    action = action.add_string_choice(*a, *a);
                }
                cmd.add_option(action)
                    .add_option(CreateCommandOption::new(
                        CommandOptionType::String,
                        "target",
                        "# or run id (or all for stop)",
                    ))
                    .add_option(CreateCommandOption::new(
                        CommandOptionType::String,
                        "message",
                        "Message for send",
                    ))
            } else {
                cmd
            }
        })
        .collect()
}

#[async_trait]
impl EventHandler for Handler {
    async fn ready(&self, ctx: Context, ready: Ready) {
        let _ = self.inner.me.set(BotInfo {
            user_id: ready.user.id.get(),
        });
        tracing::info!(bot = %ready.user.name, "discord: connected");
        if let Err(e) =
            Command::set_global_commands(&ctx.http, commands(&self.inner.settings.commands)).await
        {
            tracing::warn!(error = %e, "discord: registering application commands failed");
        }
    }

    async fn resume(&self, _ctx: Context, _event: ResumedEvent) {
        tracing::info!("discord: session resumed");
    }

    async fn message(&self, _ctx: Context, msg: Message) {
        let Some(me) = self.inner.me.get().copied() else {
            return;
        };
        if msg.author.bot || msg.content.trim().is_empty() {
            return;
        }
        let direct = msg.guild_id.is_none();
        let mentioned = msg.mentions.iter().any(|u| u.id.get() == me.user_id);
        let replied_to_us = msg
            .referenced_message
            .as_ref()
            .is_some_and(|r| r.author.id.get() == me.user_id);
        let mut text = msg.content.clone();
        for form in [format!("<@{}>", me.user_id), format!("<@!{}>", me.user_id)] {
            text = text.replace(&form, "");
        }
        let text = text.trim().to_string();
        let inbound = InboundMessage {
            origin: Origin {
                channel: CHANNEL_ID.to_string(),
                account: msg.guild_id.map(|g| g.get().to_string()),
                chat_id: msg.channel_id.get().to_string(),
                thread_id: None,
                kind: if direct {
                    ChatKind::Direct
                } else {
                    ChatKind::Group
                },
                reply_handle: None,
            },
            sender_id: msg.author.id.get().to_string(),
            sender_name: Some(msg.author.name.clone()),
            sender_username: Some(msg.author.name.clone()),
            addressed: direct || mentioned || replied_to_us || text.starts_with('/'),
            text,
            message_id: Some(msg.id.get().to_string()),
        };
        self.push(inbound).await;
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let Interaction::Command(cmd) = interaction else {
            return;
        };
        let text = command_text(&cmd);
        let handle = self.inner.interactions.open(
            &self.inner.tasks,
            ctx.http.clone(),
            cmd.clone(),
            self.inner.settings.text_limit,
        );
        let inbound = InboundMessage {
            origin: Origin {
                channel: CHANNEL_ID.to_string(),
                account: cmd.guild_id.map(|g| g.get().to_string()),
                chat_id: cmd.channel_id.get().to_string(),
                thread_id: None,
                kind: if cmd.guild_id.is_none() {
                    ChatKind::Direct
                } else {
                    ChatKind::Group
                },
                reply_handle: Some(handle),
            },
            sender_id: cmd.user.id.get().to_string(),
            sender_name: Some(cmd.user.name.clone()),
            sender_username: Some(cmd.user.name.clone()),
            addressed: true,
            text,
            message_id: Some(format!("interaction:{}", cmd.id.get())),
        };
        self.push(inbound).await;
    }
}

impl Handler {
    /// Hand a message to the gateway and wait until it is committed (serenity redelivers
    /// nothing itself, but our dedupe makes a RESUME replay harmless).
    async fn push(&self, msg: InboundMessage) {
        let (inbound, taken) = Inbound::with_ack(msg);
        if self.sink.send(inbound).await.is_ok() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(30), taken).await;
        }
    }
}

/// `/subagents action:send target:1 message:hi` → "/subagents send 1 hi".
fn command_text(cmd: &CommandInteraction) -> String {
    let mut text = format!("/{}", cmd.data.name);
    for name in ["action", "target", "message"] {
        let value = cmd
            .data
            .options
            .iter()
            .find(|o| o.name == name)
            .and_then(|o| match &o.value {
                CommandDataOptionValue::String(s) => Some(s.clone()),
                CommandDataOptionValue::Integer(i) => Some(i.to_string()),
                _ => None,
            });
        if let Some(v) = value {
            text.push(' ');
            text.push_str(&v);
        }
    }
    text
}
