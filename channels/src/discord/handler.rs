//! serenity events → the gateway: READY (identity, command registration), messages, and
//! application-command interactions.

use std::sync::Arc;

use async_trait::async_trait;
use serenity::all::{
    Command, CommandOptionType, Context, CreateCommand, CreateCommandOption, EventHandler,
    Interaction, Message, Ready, ResumedEvent,
};

use super::{convert, BotInfo, Inner};
use crate::{Inbound, InboundMessage, InboundSink, MenuCommand};

pub(super) struct Handler {
    pub(super) inner: Arc<Inner>,
    pub(super) sink: InboundSink,
}

/// The menu as Discord application commands: each option a string, with its choices.
fn commands(menu: &[MenuCommand]) -> Vec<CreateCommand> {
    menu.iter()
        .map(|c| {
            c.options.iter().fold(
                CreateCommand::new(&c.name).description(&c.description),
                |cmd, o| {
                    let option = CreateCommandOption::new(
                        CommandOptionType::String,
                        &o.name,
                        &o.description,
                    )
                    .required(o.required);
                    cmd.add_option(
                        o.choices
                            .iter()
                            .fold(option, |opt, choice| opt.add_string_choice(choice, choice)),
                    )
                },
            )
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
        if let Some(inbound) = convert::message(&msg, me, &self.inner.settings.commands) {
            self.push(inbound).await;
        }
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let cmd = match interaction {
            Interaction::Command(cmd) => cmd,
            Interaction::Component(comp) => {
                let Some(me) = self.inner.me.get().copied() else {
                    return;
                };
                if let Some(msg) = convert::press(&comp, me) {
                    super::press::answer(&ctx.http, &self.sink, &comp, msg).await;
                }
                return;
            }
            _ => return,
        };
        let handle = self.inner.interactions.open(
            &self.inner.tasks,
            ctx.http.clone(),
            cmd.clone(),
            self.inner.settings.text_limit,
            !self.inner.settings.link_preview,
        );
        self.push(convert::command(
            &cmd,
            handle,
            &self.inner.settings.commands,
        ))
        .await;
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
