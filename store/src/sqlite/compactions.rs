//! Compactions on SQLite (`compactions`): one insert per compaction, read by the newest.
//! Every run's start asks for the newest; most sessions have none, and those are
//! remembered ([`Uncompacted`]) so that asking again costs no round trip.

use std::sync::Arc;

use hashlink::LruCache;
use parking_lot::Mutex;

use super::super::compactions::decode_compaction;
use super::{now_ms, Result, Sqlite};
pub(super) use crate::compactions::*;

impl Sqlite {
    /// Commit a compaction of `session_id` in one statement (a repeat is ignored).
    pub async fn add_compaction(&self, session_id: &str, c: &NewCompaction) -> Result<()> {
        sqlx::query(crate::sql::compactions::ADD.sqlite)
            .bind(session_id)
            .bind(c.through_seq)
            .bind(&c.summary)
            .bind(c.replaced)
            .bind(c.tokens_before)
            .bind(c.tokens_after)
            .bind(now_ms())
            .execute(&mut *self.writer().await)
            .await?;
        self.uncompacted.forget(session_id);
        Ok(())
    }

    /// The compaction that reaches furthest, if any.
    pub async fn latest_compaction(&self, session_id: &str) -> Result<Option<CompactionRow>> {
        if self.uncompacted.contains(session_id) {
            return Ok(None);
        }
        let added = self.uncompacted.added();
        let r = sqlx::query(crate::sql::compactions::LATEST.sqlite)
            .bind(session_id)
            .fetch_optional(&mut *self.reader().await)
            .await?;
        let latest = r.as_ref().map(decode_compaction).transpose()?;
        if latest.is_none() {
            self.uncompacted.put_unless_added(session_id, added);
        }
        Ok(latest)
    }

    /// Every compaction of a session, oldest first.
    pub async fn compactions(&self, session_id: &str) -> Result<Vec<CompactionRow>> {
        let rows = sqlx::query(crate::sql::compactions::OF_SESSION.sqlite)
            .bind(session_id)
            .fetch_all(&mut *self.reader().await)
            .await?;
        rows.iter().map(decode_compaction).collect()
    }
}

/// Sessions (by id) known to have no compaction. Bounded: when full, the session asked
/// about least recently makes room (a miss reads the table again).
#[derive(Clone)]
pub(super) struct Uncompacted(Arc<Mutex<Known>>);

struct Known {
    ids: LruCache<String, ()>,
    /// Compactions added so far (see [`Uncompacted::put_unless_added`]).
    added: u64,
}

/// Most sessions remembered.
const UNCOMPACTED_MAX: usize = 10_000;

impl Default for Uncompacted {
    fn default() -> Self {
        Uncompacted(Arc::new(Mutex::new(Known {
            ids: LruCache::new(UNCOMPACTED_MAX),
            added: 0,
        })))
    }
}

impl Uncompacted {
    fn contains(&self, session_id: &str) -> bool {
        self.0.lock().ids.get(session_id).is_some()
    }

    /// How many compactions were added so far; pass it to [`Self::put_unless_added`].
    pub(super) fn added(&self) -> u64 {
        self.0.lock().added
    }

    /// Remember that `session_id` has no compaction, as read (committed) after `added` was
    /// taken, unless a compaction was added since: it may have committed after the read.
    pub(super) fn put_unless_added(&self, session_id: &str, added: u64) {
        let mut k = self.0.lock();
        if k.added == added {
            k.ids.insert(session_id.to_owned(), ());
        }
    }

    /// `session_id` has a compaction now; called after it is committed. (The table is read
    /// on a reader, beside the writer: a read that took `added` before this call may have
    /// missed it, and is not remembered.)
    fn forget(&self, session_id: &str) {
        let mut k = self.0.lock();
        k.ids.remove(session_id);
        k.added += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a session remembered as uncompacted from a read that raced a compaction's
    /// commit (it would be fitted without its summary until the daemon restarts).
    #[test]
    fn a_read_that_raced_a_compaction_is_not_remembered() {
        let known = Uncompacted::default();
        let added = known.added();
        known.forget("s1");
        known.put_unless_added("s1", added);
        assert!(!known.contains("s1"));
        known.put_unless_added("s1", known.added());
        assert!(known.contains("s1"));
        known.forget("s1");
        assert!(!known.contains("s1"), "a compaction added: asked again");
    }
}
