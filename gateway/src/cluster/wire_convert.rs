//! Between [`Event`] and its wire form [`WireEvent`]: field for field, statuses as their
//! stored names (checked when read).

use super::wire::{Received, WireError, WireEvent};
use crate::events::{ApprovalRequested, ApprovalResolved, Event, RunEnded, ToolFinished};
use crate::store::{ApprovalStatus, RunStatus};

impl WireEvent {
    /// The event it carries (statuses checked).
    pub fn into_received(self) -> Result<Received, WireError> {
        let (reply_in_store, waiters_only) = match &self {
            WireEvent::RunEnded {
                reply_in_store,
                part,
                ..
            } => (*reply_in_store, *part > 0),
            _ => (false, false),
        };
        let event = match self {
            WireEvent::RunStarted {
                session_key,
                run_id,
            } => Event::RunStarted {
                session_key,
                run_id,
            },
            WireEvent::RunStep {
                session_key,
                run_id,
                step,
            } => Event::RunStep {
                session_key,
                run_id,
                step,
            },
            WireEvent::RunDelta {
                session_key,
                run_id,
                reset,
                text,
            } => Event::RunDelta {
                session_key,
                run_id,
                reset,
                text,
            },
            WireEvent::RunTool {
                session_key,
                run_id,
                tool,
                call_id,
                duration_ms,
                error,
            } => Event::RunTool(ToolFinished {
                session_key,
                run_id,
                tool,
                call_id,
                duration_ms,
                error,
            }),
            WireEvent::RunEnded {
                session_key,
                run_id,
                status,
                error,
                reply,
                claimed,
                ..
            } => Event::RunEnded(RunEnded {
                session_key,
                run_id,
                status: RunStatus::parse(&status).map_err(|_| WireError::Status(status))?,
                error,
                reply,
                claimed,
            }),
            WireEvent::SubagentSpawned {
                requester,
                child_session_key,
                run_id,
            } => Event::SubagentSpawned {
                requester,
                child_session_key,
                run_id,
            },
            WireEvent::SubagentAnnounced {
                child_session_key,
                run_id,
            } => Event::SubagentAnnounced {
                child_session_key,
                run_id,
            },
            WireEvent::SubagentArchived { child_session_key } => {
                Event::SubagentArchived { child_session_key }
            }
            WireEvent::OutboxSent {
                channel,
                chat_id,
                key,
            } => Event::OutboxSent {
                channel,
                chat_id,
                key,
            },
            WireEvent::ApprovalRequested {
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
            } => Event::ApprovalRequested(ApprovalRequested {
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
            }),
            WireEvent::ApprovalResolved {
                session_key,
                id,
                run_id,
                decision,
                by,
            } => Event::ApprovalResolved(ApprovalResolved {
                session_key,
                id,
                run_id,
                decision: ApprovalStatus::parse(&decision)
                    .map_err(|_| WireError::Status(decision))?,
                by,
            }),
        };
        Ok(Received {
            event,
            reply_in_store,
            waiters_only,
        })
    }
}

impl From<&Event> for WireEvent {
    fn from(e: &Event) -> WireEvent {
        match e.clone() {
            Event::RunStarted {
                session_key,
                run_id,
            } => WireEvent::RunStarted {
                session_key,
                run_id,
            },
            Event::RunStep {
                session_key,
                run_id,
                step,
            } => WireEvent::RunStep {
                session_key,
                run_id,
                step,
            },
            Event::RunDelta {
                session_key,
                run_id,
                reset,
                text,
            } => WireEvent::RunDelta {
                session_key,
                run_id,
                reset,
                text,
            },
            Event::RunTool(t) => WireEvent::RunTool {
                session_key: t.session_key,
                run_id: t.run_id,
                tool: t.tool,
                call_id: t.call_id,
                duration_ms: t.duration_ms,
                error: t.error,
            },
            Event::RunEnded(e) => WireEvent::RunEnded {
                session_key: e.session_key,
                run_id: e.run_id,
                status: e.status.as_str().to_string(),
                error: e.error,
                reply: e.reply,
                reply_in_store: false,
                claimed: e.claimed,
                part: 0,
            },
            Event::SubagentSpawned {
                requester,
                child_session_key,
                run_id,
            } => WireEvent::SubagentSpawned {
                requester,
                child_session_key,
                run_id,
            },
            Event::SubagentAnnounced {
                child_session_key,
                run_id,
            } => WireEvent::SubagentAnnounced {
                child_session_key,
                run_id,
            },
            Event::SubagentArchived { child_session_key } => {
                WireEvent::SubagentArchived { child_session_key }
            }
            Event::OutboxSent {
                channel,
                chat_id,
                key,
            } => WireEvent::OutboxSent {
                channel,
                chat_id,
                key,
            },
            Event::ApprovalRequested(a) => WireEvent::ApprovalRequested {
                session_key: a.session_key,
                id: a.id,
                run_id: a.run_id,
                tool_call_id: a.tool_call_id,
                agent_id: a.agent_id,
                label: a.label,
                workdir: a.workdir,
                command: a.command,
                executables: a.executables,
                expires_at: a.expires_at,
                channel: a.channel,
                chat_id: a.chat_id,
            },
            Event::ApprovalResolved(a) => WireEvent::ApprovalResolved {
                session_key: a.session_key,
                id: a.id,
                run_id: a.run_id,
                decision: a.decision.as_str().to_string(),
                by: a.by,
            },
        }
    }
}
