//! Buttons on Slack: a message's actions as Block Kit (its text in a `section`, then one
//! `actions` block of buttons whose `action_id` is the action id), and a press (a
//! `block_actions` interaction) handed to the gateway and answered with what it says —
//! the message updated to the outcome through `chat.update` (its buttons gone), or an
//! ephemeral reply only the presser sees (`chat.postEphemeral`) for a refusal. The
//! envelope itself is acked at once (Slack wants it within 3 s); the answer follows.

use std::time::Duration;

use serde_json::{json, Value};

use super::convert::PressAt;
use super::web::Body;
use super::Inner;
use crate::{Action, PressAnswer};

/// How long a press waits for the gateway's answer.
const ANSWER_WAIT: Duration = Duration::from_secs(30);
/// Slack's longest button label (plain text).
const MAX_LABEL: usize = 75;

/// The blocks of a message part: its text as a section, and the buttons under it.
pub(super) fn blocks(text: &str, actions: &[Action]) -> Option<Value> {
    let buttons: Vec<Value> = crate::renderable(actions)
        .map(|a| {
            let label: String = a.label.chars().take(MAX_LABEL).collect();
            json!({"type": "button", "action_id": a.id, "value": a.id,
                   "text": {"type": "plain_text", "text": label, "emoji": true}})
        })
        .collect();
    if buttons.is_empty() {
        return None;
    }
    let mut list = Vec::new();
    if !text.trim().is_empty() {
        list.push(json!({"type": "section", "text": {"type": "mrkdwn", "text": text}}));
    }
    list.push(json!({"type": "actions", "block_id": "actions", "elements": buttons}));
    Some(Value::Array(list))
}

/// Wait for the gateway's answer to a press and give it to Slack.
pub(super) async fn answer(
    inner: &Inner,
    answered: tokio::sync::oneshot::Receiver<PressAnswer>,
    at: PressAt,
) {
    let answer = match tokio::time::timeout(ANSWER_WAIT, answered).await {
        Ok(Ok(a)) => a,
        Ok(Err(_)) => PressAnswer::refusal("The press could not be handled; try again."),
        Err(_) => return,
    };
    let result = match &answer.update {
        Some(text) => {
            let text = super::mrkdwn::to_mrkdwn(text);
            let text: String = text.chars().take(super::MAX_TEXT).collect();
            inner
                .web
                .call(
                    "chat.update",
                    Body::Json(json!({"channel": at.channel, "ts": at.ts, "text": text,
                                      "blocks": []})),
                )
                .await
        }
        None => {
            let text: String = answer.notice.chars().take(super::MAX_TEXT).collect();
            inner
                .web
                .call(
                    "chat.postEphemeral",
                    Body::Json(json!({"channel": at.channel, "user": at.user, "text": text})),
                )
                .await
        }
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, "slack: answering the press failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_become_a_section_and_a_row_of_buttons() {
        assert_eq!(blocks("hi", &[]), None);
        let b = blocks("Approve?", &[Action::new("Allow", "approve:x:allow-once")]);
        assert_eq!(
            b,
            Some(json!([
                {"type": "section", "text": {"type": "mrkdwn", "text": "Approve?"}},
                {"type": "actions", "block_id": "actions", "elements": [
                    {"type": "button", "action_id": "approve:x:allow-once",
                     "value": "approve:x:allow-once",
                     "text": {"type": "plain_text", "text": "Allow", "emoji": true}}]}
            ]))
        );
    }
}
