//! Button presses (docs/tools.md, approving commands in chat). A press is an inbound event
//! like a message: access is decided first, on the chat's rules (a stranger's press is
//! refused and changes nothing), a press the platform delivers again is recognised by its
//! id, and its action is answered by the same function as the text form (`/approve`), so
//! both take one path: the chat check, idempotence, the events. The answer goes back to
//! the adapter, which shows the presser a notice and rewrites the pressed message to show
//! the outcome.

use std::sync::Arc;

use switchboard_channels::{InboundMessage, Press, PressAnswer};

use super::access;
use crate::agent::tools::approvals::settled_text;
use crate::commands::approve;
use crate::runtime::Runtime;
use crate::store::ApprovalStatus;

/// What a presser the chat does not allow is told.
pub const NOT_ALLOWED: &str = "You are not allowed to answer this request.";
/// What a press of a button the gateway does not know is told.
pub const UNKNOWN_BUTTON: &str = "This button does nothing any more.";

/// Handle one press. `None` when it could not be handled (a store error): the adapter
/// leaves it unanswered, so a platform that redelivers brings it again.
pub async fn handle(rt: &Arc<Runtime>, msg: &InboundMessage, press: &Press) -> Option<PressAnswer> {
    let cfg = rt.config();
    match access::press_allowed(&rt.store, &cfg, msg).await {
        Ok(true) => {}
        Ok(false) => {
            tracing::info!(channel = %msg.origin.channel, chat = %msg.origin.chat_id, sender = %msg.sender_id, "button press by a sender this chat does not allow: refused");
            return Some(PressAnswer::refusal(NOT_ALLOWED));
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot check access; the press is left unanswered");
            return None;
        }
    }
    let Some((id, decision)) = approve::parse_press(&press.action) else {
        tracing::info!(channel = %msg.origin.channel, "press of an unknown button ignored");
        return Some(PressAnswer::refusal(UNKNOWN_BUTTON));
    };
    if !approve::is_owner(&cfg, msg) {
        tracing::info!(channel = %msg.origin.channel, chat = %msg.origin.chat_id, sender = %msg.sender_id, approval = %id, "approval button pressed by a sender who is not an owner: refused");
        return Some(PressAnswer::refusal(approve::NOT_OWNER));
    }
    let fresh = match &msg.message_id {
        Some(press_id) => match rt
            .store
            .mark_inbound_seen(&msg.origin.channel, press_id)
            .await
        {
            Ok(fresh) => fresh,
            Err(e) => {
                tracing::error!(error = %e, "cannot record the press; it is left unanswered");
                return None;
            }
        },
        None => true,
    };
    if !fresh {
        // Delivered again: nothing is done twice, the message is left as the first press
        // made it; the answer says how the request stands.
        tracing::info!(channel = %msg.origin.channel, approval = %id, "duplicate button press ignored");
        return match rt.store.approval(&id).await {
            Ok(row) => Some(PressAnswer {
                notice: match row.filter(|r| {
                    r.origin.channel == msg.origin.channel && r.origin.chat_id == msg.origin.chat_id
                }) {
                    Some(r) => format!("Approval {id} is {}.", r.status.as_str()),
                    None => format!("No pending approval {id} in this chat."),
                },
                alert: false,
                update: None,
            }),
            Err(e) => {
                tracing::error!(error = %e, approval = %id, "cannot read the approval request");
                None
            }
        };
    }
    let outcome = approve::answer(rt, &msg.origin, &id, decision).await;
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            tracing::error!(error = %e, approval = %id, "cannot answer the approval request");
            return None;
        }
    };
    let presser = msg.sender_name.as_deref().unwrap_or(&msg.sender_id);
    // The message shows the outcome however the request was settled (this press, the text
    // form, `/stop`, the timeout); one still pending keeps its buttons.
    let update = outcome
        .request
        .as_ref()
        .filter(|r| r.status != ApprovalStatus::Pending)
        .map(|r| settled_text(r, outcome.settled_now.then_some(presser)));
    Some(PressAnswer {
        notice: outcome.text,
        alert: false,
        update,
    })
}
