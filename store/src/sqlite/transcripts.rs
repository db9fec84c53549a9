//! Transcripts of the sessions whose runs started lately, so that a run's start reads
//! only the messages added since the last one.
//!
//! Why it is safe: messages are only ever appended, and `seq` grows in commit order (one
//! writer). The rows of a session past the last cached `seq` are exactly what the cached
//! copy lacks, whoever wrote them (a run, a claim, an announce). Each start's script reads
//! them (`start_sql!`, `seq > ?`) in the transaction that starts the run.

use std::sync::Arc;

use hashlink::LruCache;
use parking_lot::{Mutex, MutexGuard};

use super::messages::{MessageRow, ToolCallRecord};

/// Most bytes held (the rows and their strings, as allocated); past it the transcripts
/// started least recently go first (one longer than the whole budget is not kept). It is
/// what a daemon keeps resident after its sessions go quiet, so it is a share of the idle
/// memory budget (docs/performance.md, "Memory after use"): 4 MB holds ~12,000 short
/// messages; a session whose transcript was dropped reads it whole at its next start.
const MAX_BYTES: usize = 4 << 20;

/// Cached transcripts by session id, weighed by [`size`], least recently used out first.
#[derive(Clone)]
pub(super) struct TranscriptCache(Arc<Mutex<Cached>>);

struct Cached {
    sessions: LruCache<String, Arc<Vec<MessageRow>>>,
    bytes: usize,
}

impl Default for TranscriptCache {
    fn default() -> Self {
        TranscriptCache(Arc::new(Mutex::new(Cached {
            sessions: LruCache::new_unbounded(),
            bytes: 0,
        })))
    }
}

/// What a transcript counts for against `MAX_BYTES`: each row and the strings it owns,
/// as allocated (the ids are strings of their own in every row).
fn size(rows: &[MessageRow]) -> usize {
    let text = |s: &str| s.len().next_multiple_of(16);
    let opt = |s: &Option<String>| s.as_deref().map_or(0, text);
    rows.iter()
        .map(|m| {
            std::mem::size_of::<MessageRow>()
                + text(&m.session_id)
                + opt(&m.run_id)
                + text(&m.content)
                + opt(&m.tool_call_id)
                + opt(&m.tool_name)
                + m.tool_calls
                    .iter()
                    .map(|c| {
                        std::mem::size_of::<ToolCallRecord>()
                            + text(&c.id)
                            + text(&c.name)
                            + text(&c.arguments)
                    })
                    .sum::<usize>()
        })
        .sum()
}

impl TranscriptCache {
    fn lock(&self) -> MutexGuard<'_, Cached> {
        self.0.lock()
    }

    /// The cached transcript of `session_id` (empty if none): a start reads past its last
    /// `seq`, and puts it before what it read.
    pub(super) fn get(&self, session_id: &str) -> Arc<Vec<MessageRow>> {
        self.lock()
            .sessions
            .get(session_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Keep `rows`, the whole transcript of `session_id` as a start read it, unless a
    /// longer one is cached already.
    pub(super) fn put(&self, session_id: &str, rows: Vec<MessageRow>) {
        let added = size(&rows);
        let mut c = self.lock();
        let held = c.sessions.get(session_id).map(|r| r.len());
        if held.is_some_and(|n| n >= rows.len()) {
            return;
        }
        if let Some(old) = c.sessions.remove(session_id) {
            c.bytes -= size(&old);
        }
        if added > MAX_BYTES {
            return;
        }
        while c.bytes + added > MAX_BYTES {
            let Some((_, old)) = c.sessions.remove_lru() else {
                break;
            };
            c.bytes -= size(&old);
        }
        c.bytes += added;
        c.sessions.insert(session_id.to_string(), Arc::new(rows));
    }

    /// Drop every transcript (the database went quiet).
    pub(super) fn clear(&self) {
        // A new map, not `clear`: that would keep the old one's table.
        *self.lock() = Cached {
            sessions: LruCache::new_unbounded(),
            bytes: 0,
        };
    }

    /// Drop `session_id` (archived: no run of it starts again).
    pub(super) fn forget(&self, session_id: &str) {
        let mut c = self.lock();
        if let Some(old) = c.sessions.remove(session_id) {
            c.bytes -= size(&old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::Role;

    fn rows(n: i64, text: &str) -> Vec<MessageRow> {
        (1..=n)
            .map(|seq| MessageRow {
                seq,
                session_id: "s".into(),
                run_id: None,
                role: Role::User,
                content: text.into(),
                tool_calls: Vec::new(),
                tool_call_id: None,
                tool_name: None,
                created_at: 0,
            })
            .collect()
    }

    #[test]
    fn keeps_the_longest_read_and_forgets_on_archive() {
        let cache = TranscriptCache::default();
        assert!(cache.get("s").is_empty());
        cache.put("s", rows(3, "x"));
        // A shorter (older) read never replaces a longer one.
        cache.put("s", rows(2, "x"));
        assert_eq!(cache.get("s").len(), 3);
        cache.put("s", rows(5, "x"));
        assert_eq!(cache.get("s").last().map(|m| m.seq), Some(5));
        assert_eq!(cache.lock().bytes, size(&rows(5, "x")));
        cache.forget("s");
        assert!(cache.get("s").is_empty());
        assert_eq!(cache.lock().bytes, 0);
    }

    /// Catches: a row weighed by its text alone, while its ids are strings of their own
    /// in every row: the cache then held twice its budget in short messages.
    #[test]
    fn a_row_weighs_its_ids_and_itself() {
        let id = "0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b";
        let mut row = rows(1, "hi").remove(0);
        row.session_id = id.into();
        row.run_id = Some(id.into());
        let weight = size(std::slice::from_ref(&row));
        assert!(weight >= std::mem::size_of::<MessageRow>() + 2 * id.len() + "hi".len());
        assert!(weight < std::mem::size_of::<MessageRow>() + 2 * 48 + 16 + 1);
    }

    /// Catches: a quiet spell that left transcripts (or their weight) behind, or a cache
    /// that could not fill again afterwards.
    #[test]
    fn clearing_drops_every_transcript_and_its_weight() {
        let cache = TranscriptCache::default();
        cache.put("a", rows(3, "x"));
        cache.put("b", rows(2, "y"));
        cache.clear();
        assert!(cache.get("a").is_empty() && cache.get("b").is_empty());
        assert_eq!(cache.lock().bytes, 0);
        cache.put("a", rows(4, "x"));
        assert_eq!(cache.get("a").len(), 4);
        assert_eq!(cache.lock().bytes, size(&rows(4, "x")));
    }

    #[test]
    fn starts_over_past_its_bound() {
        let cache = TranscriptCache::default();
        let big = "y".repeat(MAX_BYTES / 3);
        cache.put("a", rows(1, &big));
        cache.put("b", rows(1, &big));
        cache.put("c", rows(1, &big));
        assert!(cache.get("a").is_empty(), "cleared when full");
        assert_eq!(cache.get("c").len(), 1);
        assert!(cache.lock().bytes <= MAX_BYTES);
    }

    /// Catches: the cache started over when full (the transcripts of the sessions in use
    /// read whole again) instead of dropping those started least recently, and a
    /// transcript larger than the whole budget kept past the bound.
    #[test]
    fn a_full_cache_drops_the_least_recently_started() {
        let cache = TranscriptCache::default();
        let third = "y".repeat(MAX_BYTES / 4);
        cache.put("a", rows(1, &third));
        cache.put("b", rows(1, &third));
        cache.put("c", rows(1, &third));
        assert_eq!(
            cache.get("a").len(),
            1,
            "a is started again: b is now the oldest"
        );
        cache.put("d", rows(1, &third));
        assert!(cache.get("b").is_empty());
        for s in ["a", "c", "d"] {
            assert_eq!(cache.get(s).len(), 1, "{s}");
        }
        assert_eq!(cache.lock().bytes, 3 * size(&rows(1, &third)));
        cache.put("huge", rows(1, &"z".repeat(MAX_BYTES)));
        assert!(cache.get("huge").is_empty());
        assert_eq!(cache.lock().bytes, 3 * size(&rows(1, &third)));
    }
}
