//! The wire JSON of live events (`/ws` event frames, `/api/events`): the one place an
//! [`Event`] becomes JSON. Each variant has a wire struct whose fields are declared in
//! alphabetical order of their JSON names (`type` among them), the order clients have
//! always received; every event but a delivery names its `sessionKey`. Shapes are listed in
//! `docs/events.md` and pinned by the golden tests below.

use serde::Serialize;

use crate::events::{ApprovalRequested, ApprovalResolved, Event, RunEnded, ToolFinished};
use crate::store::RunStatus;

/// An event as its JSON object (`Serialize` writes it without building a `Value`).
pub struct Wire<'a>(pub &'a Event);

impl Serialize for Wire<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Event::RunStarted {
                session_key,
                run_id,
            } => RunStartedJson {
                run_id,
                session_key,
                r#type: "run.started",
            }
            .serialize(s),
            Event::RunStep {
                session_key,
                run_id,
                step,
            } => RunStepJson {
                run_id,
                session_key,
                step: *step,
                r#type: "run.step",
            }
            .serialize(s),
            Event::RunDelta {
                session_key,
                run_id,
                reset,
                text,
            } => RunDeltaJson {
                reset: *reset,
                run_id,
                session_key,
                text,
                r#type: "run.delta",
            }
            .serialize(s),
            Event::RunTool(t) => RunToolJson::from(t).serialize(s),
            Event::RunEnded(e) if e.status == RunStatus::Interrupted => {
                CheckpointJson::from(e).serialize(s)
            }
            Event::RunEnded(e) => RunEndedJson::from(e).serialize(s),
            Event::SubagentSpawned {
                requester,
                child_session_key,
                run_id,
            } => SpawnedJson {
                child_session_key,
                requester,
                run_id,
                session_key: requester,
                r#type: "subagent.spawned",
            }
            .serialize(s),
            Event::SubagentAnnounced {
                child_session_key,
                run_id,
            } => AnnouncedJson {
                child_session_key,
                run_id,
                session_key: child_session_key,
                r#type: "subagent.announced",
            }
            .serialize(s),
            Event::SubagentArchived { child_session_key } => ArchivedJson {
                child_session_key,
                session_key: child_session_key,
                r#type: "subagent.archived",
            }
            .serialize(s),
            Event::OutboxSent {
                channel,
                chat_id,
                key,
            } => SentJson {
                channel,
                chat_id,
                key,
                r#type: "outbox.sent",
            }
            .serialize(s),
            Event::ApprovalRequested(a) => RequestedJson::from(a).serialize(s),
            Event::ApprovalResolved(a) => ResolvedJson::from(a).serialize(s),
        }
    }
}

/// An event as a `serde_json::Value` (the web chat's `event` frame carries one).
pub fn to_value(event: &Event) -> serde_json::Value {
    // Serializing these plain structs cannot fail (string keys only).
    serde_json::to_value(Wire(event)).unwrap_or_default()
}

/// An `/api/events` text frame: `{"event":{…},"type":"event"}`.
pub fn events_frame(event: &Event) -> String {
    #[derive(Serialize)]
    struct Frame<'a> {
        event: Wire<'a>,
        r#type: &'static str,
    }
    let frame = Frame {
        event: Wire(event),
        r#type: "event",
    };
    serde_json::to_string(&frame).unwrap_or_default()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunStartedJson<'a> {
    run_id: &'a str,
    session_key: &'a str,
    r#type: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunStepJson<'a> {
    run_id: &'a str,
    session_key: &'a str,
    step: u64,
    r#type: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunDeltaJson<'a> {
    reset: bool,
    run_id: &'a str,
    session_key: &'a str,
    text: &'a str,
    r#type: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunToolJson<'a> {
    call_id: &'a str,
    duration_ms: u64,
    error: Option<&'a str>,
    ok: bool,
    run_id: &'a str,
    session_key: &'a str,
    tool: &'a str,
    r#type: &'static str,
}

impl<'a> From<&'a ToolFinished> for RunToolJson<'a> {
    fn from(t: &'a ToolFinished) -> Self {
        RunToolJson {
            call_id: &t.call_id,
            duration_ms: t.duration_ms,
            error: t.error.as_deref(),
            ok: t.error.is_none(),
            run_id: &t.run_id,
            session_key: &t.session_key,
            tool: &t.tool,
            r#type: "run.tool",
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunEndedJson<'a> {
    claimed: &'a [i64],
    error: Option<&'a str>,
    reply: Option<&'a str>,
    run_id: Option<&'a str>,
    session_key: &'a str,
    status: &'static str,
    r#type: &'static str,
}

impl<'a> From<&'a RunEnded> for RunEndedJson<'a> {
    fn from(e: &'a RunEnded) -> Self {
        RunEndedJson {
            claimed: &e.claimed,
            error: e.error.as_deref(),
            reply: e.reply.as_deref(),
            run_id: e.run_id.as_deref(),
            session_key: &e.session_key,
            status: e.status.as_str(),
            r#type: "run.ended",
        }
    }
}

/// `run.ended` of a run checkpointed at shutdown (`interrupted`): it has neither an error
/// nor a reply, and names neither.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckpointJson<'a> {
    claimed: &'a [i64],
    run_id: Option<&'a str>,
    session_key: &'a str,
    status: &'static str,
    r#type: &'static str,
}

impl<'a> From<&'a RunEnded> for CheckpointJson<'a> {
    fn from(e: &'a RunEnded) -> Self {
        CheckpointJson {
            claimed: &e.claimed,
            run_id: e.run_id.as_deref(),
            session_key: &e.session_key,
            status: e.status.as_str(),
            r#type: "run.ended",
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SpawnedJson<'a> {
    child_session_key: &'a str,
    requester: &'a str,
    run_id: &'a str,
    session_key: &'a str,
    r#type: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AnnouncedJson<'a> {
    child_session_key: &'a str,
    run_id: &'a str,
    session_key: &'a str,
    r#type: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArchivedJson<'a> {
    child_session_key: &'a str,
    session_key: &'a str,
    r#type: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SentJson<'a> {
    channel: &'a str,
    chat_id: &'a str,
    key: &'a str,
    r#type: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequestedJson<'a> {
    agent_id: &'a str,
    channel: &'a str,
    chat_id: &'a str,
    command: &'a str,
    executables: &'a [String],
    expires_at: i64,
    id: &'a str,
    label: Option<&'a str>,
    run_id: &'a str,
    session_key: &'a str,
    tool_call_id: &'a str,
    r#type: &'static str,
    workdir: &'a str,
}

impl<'a> From<&'a ApprovalRequested> for RequestedJson<'a> {
    fn from(a: &'a ApprovalRequested) -> Self {
        RequestedJson {
            agent_id: &a.agent_id,
            channel: &a.channel,
            chat_id: &a.chat_id,
            command: &a.command,
            executables: &a.executables,
            expires_at: a.expires_at,
            id: &a.id,
            label: a.label.as_deref(),
            run_id: &a.run_id,
            session_key: &a.session_key,
            tool_call_id: &a.tool_call_id,
            r#type: "approval.requested",
            workdir: &a.workdir,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResolvedJson<'a> {
    by: Option<&'a str>,
    decision: &'static str,
    id: &'a str,
    run_id: &'a str,
    session_key: &'a str,
    r#type: &'static str,
}

impl<'a> From<&'a ApprovalResolved> for ResolvedJson<'a> {
    fn from(a: &'a ApprovalResolved) -> Self {
        ResolvedJson {
            by: a.by.as_deref(),
            decision: a.decision.as_str(),
            id: &a.id,
            run_id: &a.run_id,
            session_key: &a.session_key,
            r#type: "approval.resolved",
        }
    }
}

#[cfg(test)]
#[path = "event_json_tests.rs"]
mod tests;
