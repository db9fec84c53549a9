//! The live events: one typed enum for everything the gateway publishes as it works (a
//! run's start, steps, tool calls and end; a sub-agent's spawn, announce and archive; a
//! delivery; an exec approval asked and settled; a reply as it streams). `Runtime::emit` takes an [`Event`];
//! waiters match on its variants.
//!
//! One definition, one JSON: the serde attributes here are the event's JSON shape (a
//! `type` tag, camelCase fields), the one that `/ws` and `/api/events` clients read
//! (`server/event_json.rs` writes it with its keys sorted) and the one the cluster bus
//! carries between processes (`cluster/wire.rs`, inside its bounded envelope). The few
//! fields a client reads that the enum does not hold (`ok`, the `sessionKey` of a spawn,
//! announce and archive) and the checkpoint's `run.ended` without `error` and `reply` are
//! written by the helpers in `events/shape.rs`.
//!
//! Each event knows whose it is ([`Event::scope`]): the scope comes from the variant, so a
//! publisher cannot pair an event with the wrong session.
//!
//! Adding an event:
//! 1. a variant here, with typed fields (a struct of its own when it has more than three),
//!    and its arm in [`Event::scope`] — usually `Scope::Session` of the session it is about;
//! 2. its `type` name (`#[serde(rename = "…")]`; fields are camelCase) and a golden test
//!    in `server/event_json_tests.rs` (and an arm in `events/shape_tests.rs`'s strategy);
//! 3. publish it with `rt.emit(Event::…)`; list it in `docs/events.md`.
//!
//! The compiler points at every `match` that must learn the new variant.

use serde::{Deserialize, Serialize};

use crate::store::{ApprovalStatus, RunStatus};

mod shape;
#[cfg(test)]
pub(crate) mod shape_tests;

/// A live event. Cheap to move; the bus shares one copy among its subscribers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
pub enum Event {
    /// `run.started`: a run began (or resumed) its loop.
    #[serde(rename = "run.started")]
    RunStarted { session_key: String, run_id: String },
    /// `run.step`: a run calls the model for the `step`th time.
    #[serde(rename = "run.step")]
    RunStep {
        session_key: String,
        run_id: String,
        step: u64,
    },
    /// `run.delta`: a piece of the reply as the model writes it (a preview: the stored
    /// reply replaces it). `text` follows what came before in this model call, or starts it
    /// over when `reset`.
    #[serde(rename = "run.delta")]
    RunDelta {
        session_key: String,
        run_id: String,
        reset: bool,
        text: String,
    },
    /// `run.tool`: a tool call finished.
    #[serde(rename = "run.tool")]
    RunTool(ToolFinished),
    /// `run.ended`: a run ended (or was checkpointed at shutdown). Also handed to the
    /// waiters of its session (`runtime::run_ends`).
    #[serde(rename = "run.ended")]
    RunEnded(RunEnded),
    /// `subagent.spawned`: `requester`'s event; from now on the child's events are seen
    /// wherever the requester's are.
    #[serde(rename = "subagent.spawned")]
    SubagentSpawned {
        /// Written again as `sessionKey` (the event is the requester's).
        #[serde(flatten, with = "shape::requester")]
        requester: String,
        child_session_key: String,
        run_id: String,
    },
    /// `subagent.announced`: a child's announce was committed (the child's event).
    #[serde(rename = "subagent.announced")]
    SubagentAnnounced {
        /// Written again as `sessionKey` (the event is the child's).
        #[serde(flatten, with = "shape::child")]
        child_session_key: String,
        run_id: String,
    },
    /// `subagent.archived`: a child's session was archived (its last event).
    #[serde(rename = "subagent.archived")]
    SubagentArchived {
        /// Written again as `sessionKey` (the event is the child's).
        #[serde(flatten, with = "shape::child")]
        child_session_key: String,
    },
    /// `outbox.sent`: a message (all its parts) was delivered to a chat.
    #[serde(rename = "outbox.sent")]
    OutboxSent {
        channel: String,
        chat_id: String,
        key: String,
    },
    /// `approval.requested`: a run asks its chat to approve a command.
    #[serde(rename = "approval.requested")]
    ApprovalRequested(ApprovalRequested),
    /// `approval.resolved`: an approval request was settled.
    #[serde(rename = "approval.resolved")]
    ApprovalResolved(ApprovalResolved),
}

/// How a tool call went (`run.tool`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFinished {
    pub session_key: String,
    pub run_id: String,
    pub tool: String,
    pub call_id: String,
    pub duration_ms: u64,
    /// `None`: the call succeeded. Written with `ok` beside it.
    #[serde(flatten, with = "shape::tool_outcome")]
    pub error: Option<String>,
}

/// A run's end (`run.ended`), as its waiters and followers learn it. Serialized by
/// `events/shape.rs` (a checkpoint names neither `error` nor `reply`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEnded {
    pub session_key: String,
    /// `None` only for waiting messages dropped with no run to take them (to waiters alone).
    pub run_id: Option<String>,
    #[serde(deserialize_with = "shape::run_status")]
    pub status: RunStatus,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub reply: Option<String>,
    /// The inbox ids of the messages the run took (or that were dropped with it).
    pub claimed: Vec<i64>,
}

impl RunEnded {
    /// Whether the run took (or dropped) inbox message `inbox_id`.
    pub fn claimed(&self, inbox_id: i64) -> bool {
        self.claimed.contains(&inbox_id)
    }
}

/// An exec approval request (`approval.requested`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequested {
    pub session_key: String,
    pub id: String,
    pub run_id: String,
    pub tool_call_id: String,
    pub agent_id: String,
    /// The sub-agent's label, when a sub-agent asks.
    pub label: Option<String>,
    pub workdir: String,
    pub command: String,
    pub executables: Vec<String>,
    pub expires_at: i64,
    /// The chat asked.
    pub channel: String,
    pub chat_id: String,
}

/// An approval request settled (`approval.resolved`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResolved {
    pub session_key: String,
    pub id: String,
    pub run_id: String,
    #[serde(with = "shape::approval_status")]
    pub decision: ApprovalStatus,
    /// Who answered (`None`: it expired or its run was stopped).
    pub by: Option<String>,
}

/// Whose an event is: what a web chat socket checks before passing it on (README, Security).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    /// One session's (a sub-agent's run events carry the child's key).
    Session(&'a str),
    /// A sub-agent was spawned: the event is `requester`'s, and from now on `child`'s
    /// events are seen wherever `requester`'s are.
    Spawn { requester: &'a str, child: &'a str },
    /// A sub-agent session was archived: the event is `child`'s, its last.
    Archived { child: &'a str },
    /// A delivery to one chat (outbox rows record the chat, not a session).
    Delivery { channel: &'a str, chat_id: &'a str },
}

impl Event {
    /// Whose the event is.
    pub fn scope(&self) -> Scope<'_> {
        match self {
            Event::RunStarted { session_key, .. }
            | Event::RunStep { session_key, .. }
            | Event::RunDelta { session_key, .. } => Scope::Session(session_key),
            Event::RunTool(t) => Scope::Session(&t.session_key),
            Event::RunEnded(e) => Scope::Session(&e.session_key),
            Event::SubagentSpawned {
                requester,
                child_session_key,
                ..
            } => Scope::Spawn {
                requester,
                child: child_session_key,
            },
            Event::SubagentAnnounced {
                child_session_key, ..
            } => Scope::Session(child_session_key),
            Event::SubagentArchived { child_session_key } => Scope::Archived {
                child: child_session_key,
            },
            Event::OutboxSent {
                channel, chat_id, ..
            } => Scope::Delivery { channel, chat_id },
            Event::ApprovalRequested(a) => Scope::Session(&a.session_key),
            Event::ApprovalResolved(a) => Scope::Session(&a.session_key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: an event published under another session than the one it is about (a
    /// child's announce under its requester, a spawn under the child).
    #[test]
    fn each_event_is_scoped_by_what_it_is_about() {
        let spawned = Event::SubagentSpawned {
            requester: "agent:main:main".into(),
            child_session_key: "agent:main:subagent:c".into(),
            run_id: "c".into(),
        };
        assert_eq!(
            spawned.scope(),
            Scope::Spawn {
                requester: "agent:main:main",
                child: "agent:main:subagent:c"
            }
        );
        let announced = Event::SubagentAnnounced {
            child_session_key: "agent:main:subagent:c".into(),
            run_id: "c".into(),
        };
        assert_eq!(announced.scope(), Scope::Session("agent:main:subagent:c"));
        let archived = Event::SubagentArchived {
            child_session_key: "agent:main:subagent:c".into(),
        };
        assert_eq!(
            archived.scope(),
            Scope::Archived {
                child: "agent:main:subagent:c"
            }
        );
        let sent = Event::OutboxSent {
            channel: "webchat".into(),
            chat_id: "w1".into(),
            key: "k".into(),
        };
        assert_eq!(
            sent.scope(),
            Scope::Delivery {
                channel: "webchat",
                chat_id: "w1"
            }
        );
    }
}
