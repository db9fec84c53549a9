//! `/approve <id> allow-once|allow-always|deny`: answer an exec approval request. Only the
//! chat the request was posted to can answer it (routing's access check has already let
//! only allowed senders of that chat through); an id of another chat changes nothing.

use std::sync::Arc;

use switchboard_channels::Origin;

use crate::agent::tools::approvals::{emit, ApprovalEvent};
use crate::runtime::Runtime;
use crate::store::{ApprovalStatus, StoreError};

pub const USAGE: &str = "Usage: /approve <id> allow-once|allow-always|deny";

/// An answer to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    AllowOnce,
    AllowAlways,
    Deny,
}

impl Decision {
    fn status(self) -> ApprovalStatus {
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

pub async fn execute(
    rt: &Arc<Runtime>,
    origin: &Origin,
    id: &str,
    decision: Decision,
) -> Result<String, StoreError> {
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
                emit(
                    rt,
                    &row.session_key,
                    &ApprovalEvent::Resolved {
                        id: &row.id,
                        run_id: &row.run_id,
                        decision: ApprovalStatus::Cancelled.as_str(),
                        by: None,
                    },
                );
                return Ok(format!(
                    "Approval {id} was already settled (cancelled): its run has ended."
                ));
            }
        }
    }
    let answered = rt
        .store
        .answer_approval(id, &origin.channel, &origin.chat_id, decision.status(), &by)
        .await?;
    let Some(row) = answered else {
        // Only this chat's own requests are described; others do not exist for it.
        return Ok(match rt.store.approval(id).await? {
            Some(r) if r.origin.channel == origin.channel && r.origin.chat_id == origin.chat_id => {
                format!("Approval {id} was already settled ({}).", r.status.as_str())
            }
            _ => format!("No pending approval {id} in this chat."),
        });
    };
    rt.tools.approvals.wake(&row.id);
    emit(
        rt,
        &row.session_key,
        &ApprovalEvent::Resolved {
            id: &row.id,
            run_id: &row.run_id,
            decision: decision.status().as_str(),
            by: Some(&by),
        },
    );
    tracing::info!(approval = %row.id, decision = decision.status().as_str(), "exec approval answered");
    Ok(match decision {
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
    })
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
