//! Golden JSON of every event: the exact bytes `/api/events` and `/ws` clients read.

use super::*;
use crate::events::{ApprovalRequested, ApprovalResolved, Event, RunEnded, ToolFinished};
use crate::store::{ApprovalStatus, RunStatus};

const KEY: &str = "agent:main:main";
const CHILD: &str = "agent:main:subagent:c1";

fn json(e: &Event) -> String {
    serde_json::to_string(&Wire(e)).unwrap_or_default()
}

fn ended(status: RunStatus, error: Option<&str>, reply: Option<&str>) -> Event {
    Event::RunEnded(RunEnded {
        session_key: KEY.into(),
        run_id: Some("r1".into()),
        status,
        error: error.map(Into::into),
        reply: reply.map(Into::into),
        claimed: vec![3, 4],
    })
}

/// One event of every variant (and both shapes of `run.ended`) with its golden JSON.
fn every_event() -> Vec<(Event, &'static str)> {
    vec![
        (
            Event::RunStarted {
                session_key: KEY.into(),
                run_id: "r1".into(),
            },
            r#"{"runId":"r1","sessionKey":"agent:main:main","type":"run.started"}"#,
        ),
        (
            Event::RunDelta {
                session_key: KEY.into(),
                run_id: "r1".into(),
                reset: true,
                text: "Hel".into(),
            },
            r#"{"reset":true,"runId":"r1","sessionKey":"agent:main:main","text":"Hel","type":"run.delta"}"#,
        ),
        (
            Event::RunStep {
                session_key: KEY.into(),
                run_id: "r1".into(),
                step: 2,
            },
            r#"{"runId":"r1","sessionKey":"agent:main:main","step":2,"type":"run.step"}"#,
        ),
        (
            Event::RunTool(ToolFinished {
                session_key: KEY.into(),
                run_id: "r1".into(),
                tool: "exec".into(),
                call_id: "call_1".into(),
                duration_ms: 12,
                error: None,
            }),
            r#"{"callId":"call_1","durationMs":12,"error":null,"ok":true,"runId":"r1","sessionKey":"agent:main:main","tool":"exec","type":"run.tool"}"#,
        ),
        (
            Event::RunTool(ToolFinished {
                session_key: KEY.into(),
                run_id: "r1".into(),
                tool: "read".into(),
                call_id: "call_2".into(),
                duration_ms: 0,
                error: Some("no such file".into()),
            }),
            r#"{"callId":"call_2","durationMs":0,"error":"no such file","ok":false,"runId":"r1","sessionKey":"agent:main:main","tool":"read","type":"run.tool"}"#,
        ),
        (
            ended(RunStatus::Succeeded, None, Some("hi \"there\"")),
            r#"{"claimed":[3,4],"error":null,"reply":"hi \"there\"","runId":"r1","sessionKey":"agent:main:main","status":"succeeded","type":"run.ended"}"#,
        ),
        (
            ended(RunStatus::Failed, Some("model failed"), None),
            r#"{"claimed":[3,4],"error":"model failed","reply":null,"runId":"r1","sessionKey":"agent:main:main","status":"failed","type":"run.ended"}"#,
        ),
        (
            ended(RunStatus::Interrupted, None, None),
            r#"{"claimed":[3,4],"runId":"r1","sessionKey":"agent:main:main","status":"interrupted","type":"run.ended"}"#,
        ),
        (
            Event::RunEnded(RunEnded {
                session_key: KEY.into(),
                run_id: None,
                status: RunStatus::Cancelled,
                error: Some("stopped".into()),
                reply: None,
                claimed: vec![],
            }),
            r#"{"claimed":[],"error":"stopped","reply":null,"runId":null,"sessionKey":"agent:main:main","status":"cancelled","type":"run.ended"}"#,
        ),
        (
            Event::SubagentSpawned {
                requester: KEY.into(),
                child_session_key: CHILD.into(),
                run_id: "c1".into(),
            },
            r#"{"childSessionKey":"agent:main:subagent:c1","requester":"agent:main:main","runId":"c1","sessionKey":"agent:main:main","type":"subagent.spawned"}"#,
        ),
        (
            Event::SubagentAnnounced {
                child_session_key: CHILD.into(),
                run_id: "c1".into(),
            },
            r#"{"childSessionKey":"agent:main:subagent:c1","runId":"c1","sessionKey":"agent:main:subagent:c1","type":"subagent.announced"}"#,
        ),
        (
            Event::SubagentArchived {
                child_session_key: CHILD.into(),
            },
            r#"{"childSessionKey":"agent:main:subagent:c1","sessionKey":"agent:main:subagent:c1","type":"subagent.archived"}"#,
        ),
        (
            Event::OutboxSent {
                channel: "webchat".into(),
                chat_id: "w1".into(),
                key: "run:r1:reply".into(),
            },
            r#"{"channel":"webchat","chatId":"w1","key":"run:r1:reply","type":"outbox.sent"}"#,
        ),
        (
            Event::ApprovalRequested(ApprovalRequested {
                session_key: KEY.into(),
                id: "ab12cd34".into(),
                run_id: "r1".into(),
                tool_call_id: "call_1".into(),
                agent_id: "main".into(),
                label: None,
                workdir: "/w".into(),
                command: "rm -rf build".into(),
                executables: vec!["/usr/bin/rm".into()],
                expires_at: 1_700_000_000_000,
                channel: "telegram".into(),
                chat_id: "42".into(),
            }),
            r#"{"agentId":"main","channel":"telegram","chatId":"42","command":"rm -rf build","executables":["/usr/bin/rm"],"expiresAt":1700000000000,"id":"ab12cd34","label":null,"runId":"r1","sessionKey":"agent:main:main","toolCallId":"call_1","type":"approval.requested","workdir":"/w"}"#,
        ),
        (
            Event::ApprovalResolved(ApprovalResolved {
                session_key: KEY.into(),
                id: "ab12cd34".into(),
                run_id: "r1".into(),
                decision: ApprovalStatus::AllowOnce,
                by: Some("telegram:7".into()),
            }),
            r#"{"by":"telegram:7","decision":"allow-once","id":"ab12cd34","runId":"r1","sessionKey":"agent:main:main","type":"approval.resolved"}"#,
        ),
        (
            Event::ApprovalResolved(ApprovalResolved {
                session_key: KEY.into(),
                id: "ab12cd34".into(),
                run_id: "r1".into(),
                decision: ApprovalStatus::Expired,
                by: None,
            }),
            r#"{"by":null,"decision":"expired","id":"ab12cd34","runId":"r1","sessionKey":"agent:main:main","type":"approval.resolved"}"#,
        ),
    ]
}

/// Catches: a field renamed, dropped or reordered on the wire, a `type` name changed.
#[test]
fn every_event_has_its_golden_json() {
    for (event, golden) in every_event() {
        assert_eq!(json(&event), golden, "{event:?}");
    }
}

/// Catches: the web chat's frame (a `Value` inside the frame) and `/api/events` (written
/// directly) disagreeing on an event's bytes.
#[test]
fn direct_and_value_serialization_agree() {
    for (event, _) in every_event() {
        let value = to_value(&event).ok().map(|v| v.to_string());
        assert_eq!(value, Some(json(&event)), "{event:?}");
    }
}

/// Catches: the derive reading back another event than the one it wrote (a field read
/// under another name, a status or a written-twice key lost): every golden is read back
/// whole, so the bus and any client in Rust read what clients see.
#[test]
fn every_golden_reads_back_as_its_event() {
    for (event, golden) in every_event() {
        let back: Result<Event, _> = serde_json::from_str(golden);
        assert_eq!(back.ok(), Some(event), "{golden}");
    }
}

/// Catches: the `/api/events` frame's shape changed (its keys in alphabetical order).
#[test]
fn the_events_frame_wraps_the_event() {
    let event = Event::RunStarted {
        session_key: KEY.into(),
        run_id: "r1".into(),
    };
    assert_eq!(
        events_frame(&event).ok().as_deref(),
        Some(
            r#"{"event":{"runId":"r1","sessionKey":"agent:main:main","type":"run.started"},"type":"event"}"#
        )
    );
}
