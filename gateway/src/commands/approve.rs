//! `/approve <id> allow-once|allow-always|deny`: answer an exec approval request. Only an
//! owner of the channel answers (`channels.<ch>.owners`, by default its DM `allowFrom`;
//! on the web chat whoever holds the gateway token), in a DM or a group: anyone else is
//! told [`NOT_OWNER`] and nothing changes ([`is_owner`], asked by routing for the text
//! form and by `routing::press` for the buttons). Only the chat the request was posted to
//! can answer it; an id of another chat changes nothing.
//! The request's buttons (`agent::tools::approvals::buttons`, read back by `parse_press`) take the same path:
//! [`answer`].

use std::sync::Arc;

use switchboard_channels::{InboundMessage, Origin};

use crate::agent::tools::approvals::ACTION_PREFIX;
use crate::config::{Config, Owners};
use crate::events::{ApprovalResolved, Event};
use crate::runtime::Runtime;
use crate::store::{ApprovalRow, ApprovalStatus, StoreError};

pub const USAGE: &str = "Usage: /approve <id> allow-once|allow-always|deny";
/// What a sender who is not an owner is told when answering a request.
pub const NOT_OWNER: &str = "Only an owner can answer this.";

/// Whether the sender of `msg` is an owner of its channel, who may answer approvals.
pub fn is_owner(cfg: &Config, msg: &InboundMessage) -> bool {
    match cfg.channels.owners(&msg.origin.channel) {
        Owners::AnyoneWithAccess => true,
        Owners::Listed(owners) => {
            let owners: Vec<String> = owners.into_iter().map(str::to_string).collect();
            crate::routing::access::listed(&owners, &msg.sender_id, msg.sender_username.as_deref())
        }
    }
}

/// An answer to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    AllowOnce,
    AllowAlways,
    Deny,
}

impl Decision {
    pub fn status(self) -> ApprovalStatus {
        match self {
            Decision::AllowOnce => ApprovalStatus::AllowOnce,
            Decision::AllowAlways => ApprovalStatus::AllowAlways,
            Decision::Deny => ApprovalStatus::Denied,
        }
    }
}

/// Parse the words after `/approve`; `Err` is the usage answer.
pub fn parse(args: &[&str]) -> Result<(String, Decision), String> {
    let [id, decision] = args else {
        return Err(USAGE.into());
    };
    let id = id
        .trim_start_matches(['[', '#'])
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if id.is_empty() || id.len() > 32 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(USAGE.into());
    }
    let decision = match decision.to_ascii_lowercase().as_str() {
        "allow-once" | "once" | "allow" | "yes" => Decision::AllowOnce,
        "allow-always" | "always" => Decision::AllowAlways,
        "deny" | "no" | "reject" => Decision::Deny,
        _ => return Err(USAGE.into()),
    };
    Ok((id, decision))
}

/// The request id and decision of a button's action id (as a platform gave it back:
/// untrusted), read by the same rules as the text form; `None` if it is not one of ours.
pub fn parse_press(action: &str) -> Option<(String, Decision)> {
    let (id, decision) = action.strip_prefix(ACTION_PREFIX)?.split_once(':')?;
    parse(&[id, decision]).ok()
}

/// What an answer did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The answer told to whoever answered.
    pub text: String,
    /// The request as it stands now, when it is this chat's.
    pub request: Option<ApprovalRow>,
    /// Whether this answer settled it (as opposed to finding it settled already).
    pub settled_now: bool,
}

/// Answer request `id` from the chat at `origin`: the text form and the buttons alike.
pub async fn execute(
    rt: &Arc<Runtime>,
    origin: &Origin,
    id: &str,
    decision: Decision,
) -> Result<String, StoreError> {
    Ok(answer(rt, origin, id, decision).await?.text)
}

/// [`execute`], with the request as it stands afterwards.
pub async fn answer(
    rt: &Arc<Runtime>,
    origin: &Origin,
    id: &str,
    decision: Decision,
) -> Result<Outcome, StoreError> {
    let own =
        |r: &ApprovalRow| r.origin.channel == origin.channel && r.origin.chat_id == origin.chat_id;
    let outcome = |text: String, request: Option<ApprovalRow>, settled_now| Outcome {
        text,
        request: request.filter(own),
        settled_now,
    };
    let by = format!("{}:{}", origin.channel, origin.chat_id);
    // A request whose run has ended (stopped, timed out) is settled, whatever the order in
    // which the run's end and this answer arrived.
    if let Some(row) = rt.store.approval(id).await? {
        let own = row.origin.channel == origin.channel && row.origin.chat_id == origin.chat_id;
        if own && row.status == ApprovalStatus::Pending {
            let ended = rt
                .store
                .get_run(&row.run_id)
                .await?
                .is_none_or(|r| r.status.is_terminal());
            if ended
                && rt
                    .store
                    .close_approval(id, ApprovalStatus::Cancelled)
                    .await?
            {
                rt.emit(Event::ApprovalResolved(ApprovalResolved {
                    session_key: row.session_key.clone(),
                    id: row.id.clone(),
                    run_id: row.run_id.clone(),
                    decision: ApprovalStatus::Cancelled,
                    by: None,
                }));
                let text =
                    format!("Approval {id} was already settled (cancelled): its run has ended.");
                return Ok(outcome(text, rt.store.approval(id).await?, false));
            }
        }
    }
    let answered = rt
        .store
        .answer_approval(id, &origin.channel, &origin.chat_id, decision.status(), &by)
        .await?;
    let Some(row) = answered else {
        // Only this chat's own requests are described; others do not exist for it.
        let now = rt.store.approval(id).await?;
        let text = match &now {
            Some(r) if own(r) => {
                format!("Approval {id} was already settled ({}).", r.status.as_str())
            }
            _ => format!("No pending approval {id} in this chat."),
        };
        return Ok(outcome(text, now, false));
    };
    rt.parts
        .get::<crate::agent::tools::ToolRegistry>()
        .approvals
        .wake(&row.id);
    rt.emit(Event::ApprovalResolved(ApprovalResolved {
        session_key: row.session_key.clone(),
        id: row.id.clone(),
        run_id: row.run_id.clone(),
        decision: decision.status(),
        by: Some(by.clone()),
    }));
    tracing::info!(approval = %row.id, decision = decision.status().as_str(), "exec approval answered");
    let text = match decision {
        Decision::AllowOnce => format!("✅ Approved {id} once: the command runs now."),
        Decision::AllowAlways if row.executables.is_empty() => format!(
            "✅ Approved {id}: the command runs now (there was no program to remember for next time)."
        ),
        Decision::AllowAlways => format!(
            "✅ Approved {id}: the command runs now, and agent {} may run {} without asking from now on (switchboard approvals revoke to undo).",
            row.agent_id,
            row.executables.join(", ")
        ),
        Decision::Deny => format!("🚫 Denied {id}: the command was not run."),
    };
    Ok(outcome(text, Some(row), true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Any words after `/approve`: an answer or the usage line, never a panic, and an
        /// accepted id is short and alphanumeric. Catches: ids that could carry SQL-like
        /// or chat-formatting text into the answer.
        #[test]
        fn any_arguments_parse_or_get_the_usage(
            words in proptest::collection::vec(prop_oneof![".*", "[a-f0-9]{8}", Just("allow-once".to_string()), Just("deny".to_string())], 0..4)
        ) {
            let args: Vec<&str> = words.iter().map(String::as_str).collect();
            match parse(&args) {
                Ok((id, _)) => prop_assert!(!id.is_empty() && id.len() <= 32 && id.chars().all(|c| c.is_ascii_alphanumeric())),
                Err(usage) => prop_assert_eq!(usage, USAGE),
            }
        }

        /// A button's action id as a platform gives it back (untrusted): ours, or `None`,
        /// never a panic; an accepted one names a short alphanumeric id. Catches: a crafted
        /// `callback_data`/`custom_id` read as a decision on something else.
        #[test]
        fn any_action_id_is_ours_or_nothing(
            action in prop_oneof![".*", "approve:.*", "approve:[a-f0-9]{8}:.*", "approve:.*:(allow-once|deny)"]
        ) {
            if let Some((id, _)) = parse_press(&action) {
                prop_assert!(action.starts_with("approve:"));
                prop_assert!(!id.is_empty() && id.len() <= 32 && id.chars().all(|c| c.is_ascii_alphanumeric()));
            }
        }
    }

    /// Each button reads back as its own decision, within Telegram's 64 bytes of
    /// `callback_data`. Catches: a button that answers something else, or that Telegram
    /// refuses (the whole request message with it).
    #[test]
    fn buttons_read_back_as_their_decisions() {
        let id = "a1b2c3d4";
        let read: Vec<_> = crate::agent::tools::approvals::buttons(id)
            .iter()
            .map(|b| {
                assert!(b.is_renderable(), "{b:?}");
                parse_press(&b.id)
            })
            .collect();
        assert_eq!(
            read,
            vec![
                Some((id.to_string(), Decision::AllowOnce)),
                Some((id.to_string(), Decision::AllowAlways)),
                Some((id.to_string(), Decision::Deny)),
            ]
        );
        assert_eq!(parse_press("approve:a1b2c3d4"), None);
        assert_eq!(parse_press("other:a1b2c3d4:deny"), None);
    }

    #[test]
    fn parses_answers() {
        assert_eq!(
            parse(&["a1b2c3d4", "allow-once"]),
            Ok(("a1b2c3d4".into(), Decision::AllowOnce))
        );
        assert_eq!(
            parse(&["[A1B2C3D4]", "ALWAYS"]),
            Ok(("a1b2c3d4".into(), Decision::AllowAlways))
        );
        assert_eq!(parse(&["x1", "deny"]), Ok(("x1".into(), Decision::Deny)));
        for bad in [
            &[][..],
            &["x1"],
            &["x1", "maybe"],
            &["x;1", "deny"],
            &["x1", "deny", "now"],
        ] {
            assert_eq!(parse(bad), Err(USAGE.to_string()), "{bad:?}");
        }
    }
}
