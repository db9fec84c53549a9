//! Buttons under a message, handed to adapters as data (like the command menu): each a
//! label and an opaque action id that comes back to the gateway when someone presses it.
//! Adapters render them where the platform has buttons (Telegram's inline keyboard,
//! Discord's message components, the web chat's buttons) and ignore them elsewhere; what
//! an action does is the gateway's business, never an adapter's.

use serde::{Deserialize, Serialize};

/// Longest action id, in bytes: Telegram's `callback_data` holds 64 (Discord's
/// `custom_id` 100). The gateway keeps its ids within it.
pub const MAX_ACTION_ID: usize = 64;
/// Most buttons under one message (Discord: 5 per row, 5 rows; more is never needed).
pub const MAX_ACTIONS: usize = 5;
/// Longest button label, in characters (Discord's limit is 80).
pub const MAX_LABEL: usize = 80;

/// One button: what it says, and the id the gateway gets back when it is pressed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Action {
    pub label: String,
    pub id: String,
}

impl Action {
    pub fn new(label: impl Into<String>, id: impl Into<String>) -> Self {
        Action {
            label: label.into(),
            id: id.into(),
        }
    }

    /// Whether an adapter can render this button as it is: a non-blank label of at most
    /// [`MAX_LABEL`] characters and an id of 1 to [`MAX_ACTION_ID`] bytes.
    pub fn is_renderable(&self) -> bool {
        !self.label.trim().is_empty()
            && self.label.chars().count() <= MAX_LABEL
            && !self.id.is_empty()
            && self.id.len() <= MAX_ACTION_ID
    }
}

/// The buttons of `actions` an adapter renders: the renderable ones, at most
/// [`MAX_ACTIONS`]. (The gateway only makes renderable ones; this keeps a platform from
/// refusing the whole message over one bad button.)
pub fn renderable(actions: &[Action]) -> impl Iterator<Item = &Action> {
    actions
        .iter()
        .filter(|a| a.is_renderable())
        .take(MAX_ACTIONS)
}

/// A press of a button, as it reaches the gateway on an [`crate::InboundMessage`]: the
/// presser is the message's sender, the chat its origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Press {
    /// The pressed button's action id, as the platform gave it back (untrusted).
    pub action: String,
    /// The platform's id of the message the button was on (the web chat: the message's
    /// key), when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

/// The gateway's answer to a press, which the adapter gives the platform itself: a
/// platform wants a press answered within seconds (Telegram's callback query, Discord's
/// interaction), so this goes straight back to the adapter, not through the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PressAnswer {
    /// Shown to the presser alone (Telegram: a toast, an alert when `alert`; Discord: an
    /// ephemeral reply when the message is not updated; the web chat: a notice).
    pub notice: String,
    /// A refusal or an error: shown so it cannot be missed.
    pub alert: bool,
    /// The pressed message's new text, its buttons removed (the outcome, for everyone in
    /// the chat to see); `None` leaves the message as it is.
    pub update: Option<String>,
}

impl PressAnswer {
    /// A refusal shown to the presser only; the message keeps its buttons.
    pub fn refusal(notice: impl Into<String>) -> Self {
        PressAnswer {
            notice: notice.into(),
            alert: true,
            update: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_renderable_buttons_are_rendered_and_at_most_five() {
        let long_id = "x".repeat(MAX_ACTION_ID + 1);
        let mut actions = vec![
            Action::new("Allow once", "a"),
            Action::new(" ", "b"),
            Action::new("Too long an id", long_id),
            Action::new("", "c"),
        ];
        actions.extend((0..6).map(|i| Action::new(format!("n{i}"), format!("id{i}"))));
        let shown: Vec<&str> = renderable(&actions).map(|a| a.id.as_str()).collect();
        assert_eq!(shown, vec!["a", "id0", "id1", "id2", "id3"]);
    }
}
