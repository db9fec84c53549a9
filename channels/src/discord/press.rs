//! Buttons on Discord: a message's actions as message components (one action row of
//! buttons, `custom_id` = the action id), and a press (a component interaction) handed to
//! the gateway and answered through the interaction callback — the message updated to the
//! outcome (type 7, its buttons gone), or an ephemeral reply only the presser sees (type 4)
//! for a refusal. A press the gateway is slow to answer is acknowledged (type 6) within
//! Discord's 3 s and the message edited when the answer comes.

use std::time::Duration;

use serde_json::{json, Value};
use serenity::all::{
    ComponentInteraction, CreateInteractionResponse, CreateInteractionResponseFollowup,
    CreateInteractionResponseMessage, EditInteractionResponse, Http,
};

use crate::{Action, Inbound, InboundMessage, InboundSink, PressAnswer};

/// Answer directly when the gateway answers within this (Discord allows 3 s).
const ANSWER_WITHIN: Duration = Duration::from_millis(2000);
/// How long a deferred press waits for the gateway's answer.
const DEFERRED_WAIT: Duration = Duration::from_secs(30);
/// Discord's primary button style.
const PRIMARY: u8 = 1;
/// Discord's message component types: an action row, a button.
const ACTION_ROW: u8 = 1;
const BUTTON: u8 = 2;

/// The message components for `actions` (one row), if any is renderable.
pub(super) fn components(actions: &[Action]) -> Option<Value> {
    let buttons: Vec<Value> = crate::renderable(actions)
        .map(|a| json!({"type": BUTTON, "style": PRIMARY, "label": a.label, "custom_id": a.id}))
        .collect();
    (!buttons.is_empty()).then(|| json!([{"type": ACTION_ROW, "components": buttons}]))
}

/// Hand the press to the gateway and answer the interaction with what it says.
pub(super) async fn answer(
    http: &Http,
    sink: &InboundSink,
    comp: &ComponentInteraction,
    msg: InboundMessage,
) {
    let (inbound, mut answered) = Inbound::press(msg);
    if sink.send(inbound).await.is_err() {
        return;
    }
    let result = match tokio::time::timeout(ANSWER_WITHIN, &mut answered).await {
        Ok(Ok(a)) => comp.create_response(http, response(&a)).await,
        Ok(Err(_)) => respond_failed(http, comp).await,
        Err(_) => {
            // Acknowledge now (type 6), edit the message when the answer comes.
            if let Err(e) = comp
                .create_response(http, CreateInteractionResponse::Acknowledge)
                .await
            {
                tracing::warn!(error = %e, "discord: acknowledging the press failed");
                return;
            }
            match tokio::time::timeout(DEFERRED_WAIT, answered).await {
                Ok(Ok(a)) => late(http, comp, &a).await,
                _ => Ok(()),
            }
        }
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, "discord: answering the press failed");
    }
}

/// The interaction callback for an answer given in time.
fn response(a: &PressAnswer) -> CreateInteractionResponse {
    match &a.update {
        Some(text) => CreateInteractionResponse::UpdateMessage(
            CreateInteractionResponseMessage::new()
                .content(cut(text))
                .components(Vec::new()),
        ),
        None => CreateInteractionResponse::Message(
            CreateInteractionResponseMessage::new()
                .content(cut(&a.notice))
                .ephemeral(true),
        ),
    }
}

/// The gateway could not handle the press: the presser is told, nothing changes.
async fn respond_failed(http: &Http, comp: &ComponentInteraction) -> serenity::Result<()> {
    let a = PressAnswer::refusal("The press could not be handled; try again.");
    comp.create_response(http, response(&a)).await
}

/// An answer that came after the acknowledgement: edit the message, or tell the presser.
async fn late(http: &Http, comp: &ComponentInteraction, a: &PressAnswer) -> serenity::Result<()> {
    match &a.update {
        Some(text) => comp
            .edit_response(
                http,
                EditInteractionResponse::new()
                    .content(cut(text))
                    .components(Vec::new()),
            )
            .await
            .map(|_| ()),
        None => comp
            .create_followup(
                http,
                CreateInteractionResponseFollowup::new()
                    .content(cut(&a.notice))
                    .ephemeral(true),
            )
            .await
            .map(|_| ()),
    }
}

/// Text within Discord's 2000 characters.
fn cut(text: &str) -> String {
    text.chars().take(super::MAX_TEXT).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_become_one_row_of_buttons_and_none_without_actions() {
        assert_eq!(components(&[]), None);
        let c = components(&[Action::new("Allow", "approve:x:allow-once")]);
        assert_eq!(
            c,
            Some(json!([{"type": 1, "components": [
                {"type": 2, "style": 1, "label": "Allow", "custom_id": "approve:x:allow-once"}
            ]}]))
        );
    }
}
