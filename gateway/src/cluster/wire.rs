//! The bus's wire form (shared mode, `cluster::bus`): what one process tells the others
//! over `NOTIFY` — an event it emitted, or a stop — as JSON in a bounded payload.
//!
//! PostgreSQL refuses a `NOTIFY` payload of 8000 bytes or more, so every payload here is at
//! most [`MAX_PAYLOAD`] bytes. An event that does not fit whole is sent shrunk:
//!
//! - its preview texts are cut (with `…`) to [`PREVIEW`] bytes as JSON: a `run.delta`'s
//!   text, a tool's or a run's error, an approval's command, work dir, label and
//!   executables; the stored rows keep them whole;
//! - a `run.ended`'s reply is sent by reference (`reply_in_store`): the receiving process
//!   reads it, and the error, from the run's row, which the run's end committed before it
//!   emitted the event;
//! - a `run.ended`'s claimed inbox ids go [`CLAIMED_PER_PART`] to a part: the first part is
//!   the event, the others reach only the waiters of those messages (`wait: true`);
//! - what still does not fit (identifiers — a session key, a chat id — of kilobytes) is
//!   not sent, with a warning.
//!
//! Incoming payloads are hostile input: [`decode`] answers an envelope or an error for any
//! string, and never panics (property-tested).

use serde::{Deserialize, Serialize};

use crate::events::Event;

/// Longest payload sent or accepted (PostgreSQL: "must be shorter than 8000 bytes").
pub const MAX_PAYLOAD: usize = 7999;
/// A preview text cut to fit is at most this many bytes as JSON (its `…` included).
pub const PREVIEW: usize = 1024;
/// Claimed inbox ids per `run.ended` part (at most 20 bytes each as JSON: 4 KB, which
/// leaves room for two previews and the identifiers).
pub const CLAIMED_PER_PART: usize = 200;
/// Executables an approval lists when it is cut to fit.
const EXECUTABLES: usize = 16;
/// The wire form's version; a payload of another version is refused (a rolling upgrade
/// across a change of it loses the live events between the two builds, nothing stored).
const VERSION: u8 = 1;

/// One notification: who sent it, its number among the sender's (notifications that are
/// alike are never folded into one by PostgreSQL), and what it says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    pub v: u8,
    /// The sender's owner id (`host:pid:random`): a process skips its own.
    pub from: String,
    pub seq: u64,
    pub msg: Msg,
}

/// What a notification says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Msg {
    /// Boxed: an event is several times the size of a stop.
    Event(Box<WireEvent>),
    Stop(Stop),
}

/// A stop: every process cancels the listed runs of `session_key` it runs, and any of
/// them it starts later (`cluster::stop`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    pub session_key: String,
    pub runs: Vec<String>,
}

/// An [`Event`] on the wire, field for field; statuses as their stored names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum WireEvent {
    RunStarted {
        session_key: String,
        run_id: String,
    },
    RunStep {
        session_key: String,
        run_id: String,
        step: u64,
    },
    RunDelta {
        session_key: String,
        run_id: String,
        reset: bool,
        text: String,
    },
    RunTool {
        session_key: String,
        run_id: String,
        tool: String,
        call_id: String,
        duration_ms: u64,
        error: Option<String>,
    },
    RunEnded {
        session_key: String,
        run_id: Option<String>,
        status: String,
        error: Option<String>,
        reply: Option<String>,
        /// The reply (and the error) are to be read from the run's row.
        #[serde(default)]
        reply_in_store: bool,
        claimed: Vec<i64>,
        /// 0: the event; 1…: more of its claimed ids, for waiters only.
        #[serde(default)]
        part: u32,
    },
    SubagentSpawned {
        requester: String,
        child_session_key: String,
        run_id: String,
    },
    SubagentAnnounced {
        child_session_key: String,
        run_id: String,
    },
    SubagentArchived {
        child_session_key: String,
    },
    OutboxSent {
        channel: String,
        chat_id: String,
        key: String,
    },
    ApprovalRequested {
        session_key: String,
        id: String,
        run_id: String,
        tool_call_id: String,
        agent_id: String,
        label: Option<String>,
        workdir: String,
        command: String,
        executables: Vec<String>,
        expires_at: i64,
        channel: String,
        chat_id: String,
    },
    ApprovalResolved {
        session_key: String,
        id: String,
        run_id: String,
        decision: String,
        by: Option<String>,
    },
}

/// An event as a receiving process takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub event: Event,
    /// A `run.ended` whose reply and error are in the run's row.
    pub reply_in_store: bool,
    /// A later part of a `run.ended`: for the waiters of its claimed ids only.
    pub waiters_only: bool,
}

/// Why a payload was refused.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("payload of {0} bytes (at most {MAX_PAYLOAD})")]
    TooLong(usize),
    #[error("not a bus message: {0}")]
    Json(#[from] serde_json::Error),
    #[error("wire version {0} (this build speaks {VERSION})")]
    Version(u8),
    #[error("unknown status `{0}`")]
    Status(String),
}

/// Reads one payload: an envelope of this version, or why not.
pub fn decode(payload: &str) -> Result<Envelope, WireError> {
    if payload.len() > MAX_PAYLOAD {
        return Err(WireError::TooLong(payload.len()));
    }
    let env: Envelope = serde_json::from_str(payload)?;
    if env.v != VERSION {
        return Err(WireError::Version(env.v));
    }
    Ok(env)
}

/// A stop's payload; `None` when it cannot fit (a session key of kilobytes).
pub fn encode_stop(from: &str, seq: u64, stop: &Stop) -> Option<String> {
    encode(from, seq, Msg::Stop(stop.clone()))
}

/// An event's payloads: one when it fits whole, else its shrunk parts (module doc); none
/// when even those do not fit. `seq` gives each payload its number.
pub fn encode_event(from: &str, mut seq: impl FnMut() -> u64, event: &Event) -> Vec<String> {
    let wire = WireEvent::from(event);
    if let Some(whole) = encode(from, seq(), Msg::Event(Box::new(wire.clone()))) {
        return vec![whole];
    }
    wire.shrunk()
        .into_iter()
        .filter_map(|part| encode(from, seq(), Msg::Event(Box::new(part))))
        .collect()
}

fn encode(from: &str, seq: u64, msg: Msg) -> Option<String> {
    let env = Envelope {
        v: VERSION,
        from: from.to_string(),
        seq,
        msg,
    };
    serde_json::to_string(&env)
        .ok()
        .filter(|p| p.len() <= MAX_PAYLOAD)
}

impl WireEvent {
    /// The event with its previews cut, its reply by reference, and its claimed ids split
    /// into parts (one part for every other event).
    fn shrunk(mut self) -> Vec<WireEvent> {
        match &mut self {
            WireEvent::RunDelta { text, .. } => cut(text, PREVIEW),
            WireEvent::RunTool { error, .. } => cut_opt(error, PREVIEW),
            WireEvent::ApprovalRequested {
                label,
                workdir,
                command,
                executables,
                ..
            } => {
                cut_opt(label, PREVIEW);
                cut(workdir, PREVIEW);
                cut(command, PREVIEW);
                executables.truncate(EXECUTABLES);
                for e in executables.iter_mut() {
                    cut(e, PREVIEW / EXECUTABLES);
                }
            }
            WireEvent::RunEnded {
                run_id,
                error,
                reply,
                reply_in_store,
                claimed,
                ..
            } => {
                if run_id.is_some() {
                    *reply = None;
                    *error = None;
                    *reply_in_store = true;
                } else {
                    cut_opt(reply, PREVIEW);
                    cut_opt(error, PREVIEW);
                }
                let all = std::mem::take(claimed);
                let parts: Vec<&[i64]> = if all.is_empty() {
                    vec![&[]]
                } else {
                    all.chunks(CLAIMED_PER_PART).collect()
                };
                return parts
                    .into_iter()
                    .enumerate()
                    .map(|(i, ids)| {
                        let mut part = self.clone();
                        if let WireEvent::RunEnded {
                            claimed, part: n, ..
                        } = &mut part
                        {
                            *claimed = ids.to_vec();
                            *n = u32::try_from(i).unwrap_or(u32::MAX);
                        }
                        part
                    })
                    .collect();
            }
            _ => {}
        }
        vec![self]
    }
}

/// Bytes `c` takes inside a JSON string as serde_json writes it.
fn json_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// Cuts `s` so that, as JSON, it takes at most `budget` bytes, ending in `…` when cut.
fn cut(s: &mut String, budget: usize) {
    if s.chars().map(json_len).sum::<usize>() <= budget {
        return;
    }
    let room = budget.saturating_sub('…'.len_utf8());
    let mut used = 0;
    let mut end = 0;
    for (i, c) in s.char_indices() {
        used += json_len(c);
        if used > room {
            break;
        }
        end = i + c.len_utf8();
    }
    s.truncate(end);
    s.push('…');
}

fn cut_opt(s: &mut Option<String>, budget: usize) {
    if let Some(s) = s {
        cut(s, budget);
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
