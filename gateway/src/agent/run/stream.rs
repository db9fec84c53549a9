//! A reply as it streams: the text pieces of a run's model calls published as `run.delta`
//! events, so a web chat can show the answer while the model writes it. Coalesced (a
//! piece goes out at once when none went out for [`FLUSH_EVERY`], else with the next
//! [`FLUSH_BYTES`] or the next tick of the caller's [`FLUSH_EVERY`] timer), bounded
//! ([`MAX_STREAMED`] bytes per model call; the rest arrives with the reply), and built only
//! while someone listens to the event bus. The reply the run stores replaces the streamed
//! text; deltas are a preview, never a record.

use std::time::{Duration, Instant};

use crate::events::Event;
use crate::runtime::Runtime;
use crate::text::head;

/// Largest text held back before an event goes out.
const FLUSH_BYTES: usize = 1024;
/// Longest a piece is held back waiting for more.
pub(super) const FLUSH_EVERY: Duration = Duration::from_millis(80);
/// Most text of one model call published as deltas.
pub(super) const MAX_STREAMED: usize = 32 * 1024;

/// The deltas of one run.
pub(super) struct Deltas<'a> {
    rt: &'a Runtime,
    session_key: &'a str,
    run_id: &'a str,
    pending: String,
    /// The next event starts the text over.
    reset: bool,
    /// Bytes of this model call already taken (published or pending).
    taken: usize,
    /// When the last event went out (none yet: the first piece goes out at once).
    last_flush: Option<Instant>,
}

impl<'a> Deltas<'a> {
    pub(super) fn new(rt: &'a Runtime, session_key: &'a str, run_id: &'a str) -> Deltas<'a> {
        Deltas {
            rt,
            session_key,
            run_id,
            pending: String::new(),
            reset: true,
            taken: 0,
            last_flush: None,
        }
    }

    /// A piece of the answer; `fresh` when it starts a model call's (or a retry's) text.
    pub(super) fn push(&mut self, fresh: bool, piece: &str) {
        if fresh {
            self.pending.clear();
            self.reset = true;
            self.taken = 0;
        }
        if !self.rt.events.is_heard() {
            // Nobody listens: nothing is built. A listener that comes later sees the
            // rest of the text from where it joins.
            self.pending.clear();
            self.taken = self.taken.saturating_add(piece.len());
            return;
        }
        let room = MAX_STREAMED.saturating_sub(self.taken);
        let piece = head(piece, room);
        self.taken = self.taken.saturating_add(piece.len());
        self.pending.push_str(piece);
        if self.pending.len() >= FLUSH_BYTES || self.due() {
            self.flush();
        }
    }

    /// Publishes what is held back if it has waited long enough (the caller's timer).
    pub(super) fn tick(&mut self) {
        if self.due() {
            self.flush();
        }
    }

    fn due(&self) -> bool {
        self.last_flush.is_none_or(|t| t.elapsed() >= FLUSH_EVERY)
    }

    /// Publishes what is held back (at the end of a model call).
    pub(super) fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.rt.emit(Event::RunDelta {
            session_key: self.session_key.to_string(),
            run_id: self.run_id.to_string(),
            reset: self.reset,
            text: std::mem::take(&mut self.pending),
        });
        self.reset = false;
        self.last_flush = Some(Instant::now());
    }
}
