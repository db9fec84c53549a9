//! The derived JSON of events, over arbitrary events: it reads back whole, and it names
//! the session the event's scope says (what a client filters on). The strategy is shared
//! with the bus's wire tests (`cluster/wire_tests.rs`).

use proptest::prelude::*;

use super::*;

/// A short text of any characters (quotes, controls, non-ASCII).
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..24).prop_map(String::from_iter)
}

fn run_status() -> impl Strategy<Value = RunStatus> {
    prop::sample::select(vec![
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::Timeout,
        RunStatus::Cancelled,
        RunStatus::Interrupted,
    ])
}

fn approval_status() -> impl Strategy<Value = ApprovalStatus> {
    prop::sample::select(vec![
        ApprovalStatus::Pending,
        ApprovalStatus::AllowOnce,
        ApprovalStatus::AllowAlways,
        ApprovalStatus::Denied,
        ApprovalStatus::Cancelled,
        ApprovalStatus::Expired,
    ])
}

fn run_ended() -> impl Strategy<Value = RunEnded> {
    (
        text(),
        prop::option::of(text()),
        run_status(),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::collection::vec(any::<i64>(), 0..8),
    )
        .prop_map(|(session_key, run_id, status, error, reply, claimed)| {
            // A checkpoint has neither an error nor a reply (the run goes on later).
            let checkpoint = status == RunStatus::Interrupted;
            RunEnded {
                session_key,
                run_id,
                status,
                error: error.filter(|_| !checkpoint),
                reply: reply.filter(|_| !checkpoint),
                claimed,
            }
        })
}

fn approval_requested() -> impl Strategy<Value = ApprovalRequested> {
    (
        (text(), text(), text(), text(), text()),
        (prop::option::of(text()), text(), text()),
        (
            prop::collection::vec(text(), 0..4),
            any::<i64>(),
            text(),
            text(),
        ),
    )
        .prop_map(
            |(
                (session_key, id, run_id, tool_call_id, agent_id),
                (label, workdir, command),
                (executables, expires_at, channel, chat_id),
            )| ApprovalRequested {
                session_key,
                id,
                run_id,
                tool_call_id,
                agent_id,
                label,
                workdir,
                command,
                executables,
                expires_at,
                channel,
                chat_id,
            },
        )
}

/// Any event, of every variant, with short fields (each fits a bus payload whole).
pub(crate) fn any_event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (text(), text()).prop_map(|(session_key, run_id)| Event::RunStarted {
            session_key,
            run_id
        }),
        (text(), text(), any::<u64>()).prop_map(|(session_key, run_id, step)| Event::RunStep {
            session_key,
            run_id,
            step
        }),
        (text(), text(), any::<bool>(), text()).prop_map(|(session_key, run_id, reset, text)| {
            Event::RunDelta {
                session_key,
                run_id,
                reset,
                text,
            }
        }),
        (
            (text(), text(), text(), text()),
            any::<u64>(),
            prop::option::of(text())
        )
            .prop_map(
                |((session_key, run_id, tool, call_id), duration_ms, error)| {
                    Event::RunTool(ToolFinished {
                        session_key,
                        run_id,
                        tool,
                        call_id,
                        duration_ms,
                        error,
                    })
                }
            ),
        run_ended().prop_map(Event::RunEnded),
        (text(), text(), text()).prop_map(|(requester, child_session_key, run_id)| {
            Event::SubagentSpawned {
                requester,
                child_session_key,
                run_id,
            }
        }),
        (text(), text()).prop_map(|(child_session_key, run_id)| Event::SubagentAnnounced {
            child_session_key,
            run_id
        }),
        text().prop_map(|child_session_key| Event::SubagentArchived { child_session_key }),
        (text(), text(), text()).prop_map(|(channel, chat_id, key)| Event::OutboxSent {
            channel,
            chat_id,
            key
        }),
        approval_requested().prop_map(Event::ApprovalRequested),
        (
            (text(), text(), text()),
            approval_status(),
            prop::option::of(text())
        )
            .prop_map(|((session_key, id, run_id), decision, by)| {
                Event::ApprovalResolved(ApprovalResolved {
                    session_key,
                    id,
                    run_id,
                    decision,
                    by,
                })
            }),
    ]
}

/// The session an event's scope names, as its JSON's `sessionKey` must (none for a
/// delivery).
fn scoped_session(e: &Event) -> Option<&str> {
    match e.scope() {
        Scope::Session(key) => Some(key),
        Scope::Spawn { requester, .. } => Some(requester),
        Scope::Archived { child } => Some(child),
        Scope::Delivery { .. } => None,
    }
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a field written under one name and read under another, a status or a
    /// decision that does not read back, a variant's `type` shared or lost.
    #[test]
    fn every_event_reads_back_from_its_json(event in any_event()) {
        let json = serde_json::to_string(&event);
        prop_assert!(json.is_ok(), "{json:?}");
        let back: Result<Event, _> = serde_json::from_str(&json.unwrap_or_default());
        prop_assert_eq!(back.ok(), Some(event));
    }

    /// Catches: an event whose JSON names another session than its scope (a web chat page
    /// filters on `sessionKey`), or a delivery that names one.
    #[test]
    fn the_json_names_the_session_of_the_scope(event in any_event()) {
        let value = serde_json::to_value(&event).unwrap_or_default();
        let named = value.get("sessionKey").and_then(|v| v.as_str());
        prop_assert_eq!(named, scoped_session(&event));
        prop_assert!(value.get("type").and_then(|v| v.as_str()).is_some());
    }
}
