//! Answering application commands through the interaction callback: answer at once when
//! the gateway's reply comes quickly, otherwise defer ("thinking…") and edit the original
//! response when it arrives. The gateway addresses the interaction by its reply handle.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serenity::all::{
    CommandInteraction, CreateInteractionResponse, CreateInteractionResponseFollowup,
    CreateInteractionResponseMessage, EditInteractionResponse, Http, InteractionResponseFlags,
    MessageFlags,
};
use tokio::sync::oneshot;
use tokio_util::task::TaskTracker;

use crate::OutboundMessage;

/// Answer directly when the reply comes within this; defer otherwise (Discord allows 3 s).
const ANSWER_WITHIN: Duration = Duration::from_millis(2000);
/// A deferred interaction's token lives 15 minutes.
const DEFERRED_FOR: Duration = Duration::from_secs(14 * 60);

#[derive(Default)]
pub(super) struct Pending {
    waiting: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
}

/// The gateway's answer to an interaction: its text and footer.
struct Answer {
    text: String,
    footer: Option<String>,
}

impl Answer {
    fn parts(&self, limit: usize) -> std::vec::IntoIter<String> {
        crate::split::split_code_aware(&self.text, self.footer.as_deref(), limit).into_iter()
    }
}

impl Pending {
    /// Start waiting for the answer to `cmd`; returns its reply handle.
    pub(super) fn open(
        &self,
        tasks: &TaskTracker,
        http: Arc<Http>,
        cmd: CommandInteraction,
        limit: usize,
        suppress_embeds: bool,
    ) -> String {
        let handle = format!("interaction:{}", cmd.id.get());
        let (tx, rx) = oneshot::channel();
        self.waiting.lock().insert(handle.clone(), tx);
        let flags = if suppress_embeds {
            InteractionResponseFlags::SUPPRESS_EMBEDS
        } else {
            InteractionResponseFlags::empty()
        };
        tasks.spawn(respond(http, cmd, rx, limit, flags));
        handle
    }

    /// Deliver the gateway's answer; false if nobody waits for this handle any more.
    pub(super) fn answer(&self, handle: &str, msg: &OutboundMessage) -> bool {
        let answer = Answer {
            text: msg.text.clone(),
            footer: msg.footer.clone(),
        };
        match self.waiting.lock().remove(handle) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }
}

async fn respond(
    http: Arc<Http>,
    cmd: CommandInteraction,
    mut rx: oneshot::Receiver<Answer>,
    limit: usize,
    flags: InteractionResponseFlags,
) {
    let quick = tokio::time::timeout(ANSWER_WITHIN, &mut rx).await;
    let result = match quick {
        Ok(Ok(answer)) => {
            let mut parts = answer.parts(limit);
            let first = parts.next().unwrap_or_default();
            let r = cmd
                .create_response(
                    &http,
                    CreateInteractionResponse::Message(
                        CreateInteractionResponseMessage::new()
                            .content(first)
                            .flags(flags),
                    ),
                )
                .await;
            follow_up(&http, &cmd, parts, flags).await;
            r
        }
        Ok(Err(_)) => return,
        Err(_) => {
            if let Err(e) = cmd
                .create_response(
                    &http,
                    CreateInteractionResponse::Defer(CreateInteractionResponseMessage::new()),
                )
                .await
            {
                tracing::warn!(error = %e, "discord: deferring the interaction failed");
            }
            let answer = match tokio::time::timeout(DEFERRED_FOR, rx).await {
                Ok(Ok(answer)) => answer,
                _ => Answer {
                    text: "The answer did not arrive in time.".to_string(),
                    footer: None,
                },
            };
            let mut parts = answer.parts(limit);
            let first = parts.next().unwrap_or_default();
            let r = cmd
                .edit_response(&http, EditInteractionResponse::new().content(first))
                .await
                .map(|_| ());
            follow_up(&http, &cmd, parts, flags).await;
            r
        }
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, "discord: answering the interaction failed");
    }
}

async fn follow_up(
    http: &Http,
    cmd: &CommandInteraction,
    parts: impl Iterator<Item = String>,
    flags: InteractionResponseFlags,
) {
    for part in parts {
        let message = CreateInteractionResponseFollowup::new()
            .content(part)
            .flags(MessageFlags::from_bits_truncate(flags.bits()));
        if let Err(e) = cmd.create_followup(http, message).await {
            tracing::warn!(error = %e, "discord: interaction follow-up failed");
        }
    }
}
