//! The bus's wire form (shared mode, `cluster::bus`): what one process tells the others
//! over `NOTIFY` — an event it emitted, or a stop — as JSON in a bounded payload. An event
//! travels in the JSON it derives (`events.rs`), the one clients read: there is no wire
//! twin of it, and a change of that JSON is a change of [`VERSION`].
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
/// 2: the event in its derived JSON (`type` tag, camelCase), the same as clients read.
const VERSION: u8 = 2;

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
    Event(Box<Carried>),
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

/// An [`Event`] on the wire: the event in its own JSON (the one clients read, derived in
/// `events.rs`), and how it was shrunk to fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Carried {
    pub event: Event,
    /// A `run.ended` whose reply (and error) are to be read from the run's row.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reply_in_store: bool,
    /// 0: the event; 1…: more of a `run.ended`'s claimed ids, for waiters only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub part: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Carried {
    fn whole(event: Event) -> Carried {
        Carried {
            event,
            reply_in_store: false,
            part: 0,
        }
    }

    /// The event as a receiving process takes it.
    pub fn into_received(self) -> Received {
        Received {
            event: self.event,
            reply_in_store: self.reply_in_store,
            waiters_only: self.part > 0,
        }
    }
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
    let whole = Carried::whole(event.clone());
    if let Some(whole) = encode(from, seq(), Msg::Event(Box::new(whole))) {
        return vec![whole];
    }
    shrunk(event.clone())
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
    match serde_json::to_string(&env) {
        Ok(p) => Some(p).filter(|p| p.len() <= MAX_PAYLOAD),
        Err(e) => {
            tracing::error!(error = %e, "bus: cannot write a message as JSON");
            None
        }
    }
}

/// The event with its previews cut, its reply by reference, and its claimed ids split
/// into parts (one part for every other event).
fn shrunk(mut event: Event) -> Vec<Carried> {
    match &mut event {
        Event::RunDelta { text, .. } => cut(text, PREVIEW),
        Event::RunTool(t) => cut_opt(&mut t.error, PREVIEW),
        Event::ApprovalRequested(a) => {
            cut_opt(&mut a.label, PREVIEW);
            cut(&mut a.workdir, PREVIEW);
            cut(&mut a.command, PREVIEW);
            a.executables.truncate(EXECUTABLES);
            for e in a.executables.iter_mut() {
                cut(e, PREVIEW / EXECUTABLES);
            }
        }
        Event::RunEnded(end) => {
            let reply_in_store = end.run_id.is_some();
            if reply_in_store {
                end.reply = None;
                end.error = None;
            } else {
                cut_opt(&mut end.reply, PREVIEW);
                cut_opt(&mut end.error, PREVIEW);
            }
            let all = std::mem::take(&mut end.claimed);
            let parts: Vec<&[i64]> = if all.is_empty() {
                vec![&[]]
            } else {
                all.chunks(CLAIMED_PER_PART).collect()
            };
            return parts
                .into_iter()
                .enumerate()
                .map(|(i, ids)| {
                    let mut part = end.clone();
                    part.claimed = ids.to_vec();
                    Carried {
                        event: Event::RunEnded(part),
                        reply_in_store,
                        part: u32::try_from(i).unwrap_or(u32::MAX),
                    }
                })
                .collect();
        }
        _ => {}
    }
    vec![Carried::whole(event)]
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
