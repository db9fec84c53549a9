//! Removing the files the gateway no longer needs (docs/media.md): a copy the agent sent
//! (`outgoing`, `<state>/media/out/<id>/`) once its outbox row is delivered or failed
//! (Telegram, Discord: right after the delivered state is committed, `outbox::copies::remove_sent`; the
//! web chat's, its download, `media.keepDays` after delivery), and web chat uploads no
//! message took. The sweep runs at start and then hourly, owned by the app's task
//! tracker: it catches what a crash between the commit and the removal left, copies of a
//! `message` call that failed before its row was queued, and expired downloads.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use switchboard_channels::webchat::files::valid_id;
use switchboard_channels::OutboundFile;
use tokio_util::sync::CancellationToken;

use crate::outbox::copies::copy_id;
use crate::runtime::Runtime;

/// Time between sweeps.
pub const PERIOD: Duration = Duration::from_secs(3600);
/// A copy no outbox row names is left alone this long: the `message` tool copies the
/// file just before it queues the row.
pub const ORPHAN_GRACE: Duration = Duration::from_secs(3600);
/// A web chat upload no message took within this long is removed.
pub const UPLOAD_STALE: Duration = Duration::from_secs(24 * 3600);
/// Most entries one sweep looks at per folder (the rest wait for the next sweep).
const SWEEP_MAX: usize = 10_000;

/// What one sweep removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    pub copies: usize,
    pub uploads: usize,
}

/// Sweep now, then every [`PERIOD`] until `cancel` fires.
pub async fn run(rt: Arc<Runtime>, cancel: CancellationToken) {
    loop {
        match once(&rt).await {
            Ok(s) if s != Swept::default() => {
                tracing::info!(
                    copies = s.copies,
                    uploads = s.uploads,
                    "removed files no longer needed"
                )
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "cannot sweep the sent files"),
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(PERIOD) => {}
        }
    }
}

/// One sweep of the outgoing copies and the staged uploads.
pub async fn once(rt: &Runtime) -> Result<Swept, crate::store::StoreError> {
    let keep_days = rt.config().media.keep_days;
    let kept_since = crate::store::now_ms() - i64::from(keep_days) * 24 * 3600 * 1000;
    let held: HashSet<String> = rt
        .store
        .outbox_files_held(switchboard_channels::webchat::CHANNEL_ID, kept_since)
        .await?
        .iter()
        .filter_map(|json| serde_json::from_str::<OutboundFile>(json).ok())
        .filter_map(|f| copy_id(&f))
        .collect();
    let out = crate::outbox::copies::out_dir(&rt.home.state_dir);
    let copies = sweep_copies(&out, &held, ORPHAN_GRACE).await;
    let uploads = sweep_files(&super::upload_dir(&rt.home.state_dir), UPLOAD_STALE).await;
    Ok(Swept { copies, uploads })
}

/// Remove the folders of `out` that are not `held` and older than `grace`; returns how
/// many were removed. Only folders named like a copy id are touched.
pub async fn sweep_copies(out: &Path, held: &HashSet<String>, grace: Duration) -> usize {
    let Ok(mut entries) = tokio::fs::read_dir(out).await else {
        return 0;
    };
    let mut removed = 0;
    let mut seen = 0;
    while let Ok(Some(entry)) = entries.next_entry().await {
        seen += 1;
        if seen > SWEEP_MAX {
            break;
        }
        let name = entry.file_name();
        let Some(id) = name.to_str().filter(|n| valid_id(n)) else {
            continue;
        };
        if held.contains(id) {
            continue;
        }
        // `symlink_metadata`: a link is removed as a link, never followed.
        let Ok(meta) = tokio::fs::symlink_metadata(entry.path()).await else {
            continue;
        };
        if !older_than(&meta, grace) {
            continue;
        }
        let gone = if meta.is_dir() {
            tokio::fs::remove_dir_all(entry.path()).await
        } else {
            tokio::fs::remove_file(entry.path()).await
        };
        match gone {
            Ok(()) => removed += 1,
            Err(e) => {
                tracing::warn!(path = %entry.path().display(), error = %e, "cannot remove a sent file's copy")
            }
        }
    }
    removed
}

/// Remove the plain files of `dir` older than `age` (web chat uploads never taken, and
/// broken-off `.part` files); returns how many were removed.
pub async fn sweep_files(dir: &Path, age: Duration) -> usize {
    let Ok(mut entries) = tokio::fs::read_dir(dir).await else {
        return 0;
    };
    let mut removed = 0;
    let mut seen = 0;
    while let Ok(Some(entry)) = entries.next_entry().await {
        seen += 1;
        if seen > SWEEP_MAX {
            break;
        }
        let stale = tokio::fs::symlink_metadata(entry.path())
            .await
            .ok()
            .filter(|m| m.is_file())
            .is_some_and(|m| older_than(&m, age));
        if stale && tokio::fs::remove_file(entry.path()).await.is_ok() {
            removed += 1;
        }
    }
    removed
}

fn older_than(meta: &std::fs::Metadata, age: Duration) -> bool {
    meta.modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|a| a > age)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, secs: u64) {
        let t = std::time::SystemTime::now() - Duration::from_secs(secs);
        std::fs::File::open(path)
            .and_then(|f| f.set_modified(t))
            .expect("mtime");
    }

    /// Catches: a held copy or a fresh orphan (its row not yet queued) removed, an old
    /// orphan kept, or a folder not named like a copy touched.
    #[tokio::test]
    async fn only_old_copies_no_row_holds_are_removed() {
        let out = std::env::temp_dir().join(format!("sb-copy-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let held = "0123456789abcdef0123456789abcdef";
        let orphan = "fedcba9876543210fedcba9876543210";
        let fresh = "00000000000000000000000000000001";
        for id in [held, orphan, fresh, "not-a-copy"] {
            std::fs::create_dir_all(out.join(id)).expect("dir");
            std::fs::write(out.join(id).join("f.txt"), b"x").expect("file");
        }
        for id in [held, orphan, "not-a-copy"] {
            age(&out.join(id), 7200);
        }
        let keep: HashSet<String> = [held.to_string()].into();
        assert_eq!(sweep_copies(&out, &keep, ORPHAN_GRACE).await, 1);
        assert!(out.join(held).exists() && out.join(fresh).exists());
        assert!(!out.join(orphan).exists() && out.join("not-a-copy").exists());
        let _ = std::fs::remove_dir_all(&out);
    }

    /// Catches: an upload never named by a message kept for ever, or a fresh one removed.
    #[tokio::test]
    async fn stale_uploads_are_swept_and_fresh_ones_kept() {
        let dir = std::env::temp_dir().join(format!("sb-upload-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let old = dir.join("0123456789abcdef0123456789abcdef");
        let fresh = dir.join("fedcba9876543210fedcba9876543210");
        std::fs::write(&old, b"old").expect("old");
        std::fs::write(&fresh, b"fresh").expect("fresh");
        age(&old, 48 * 3600);
        assert_eq!(sweep_files(&dir, UPLOAD_STALE).await, 1);
        assert!(!old.exists() && fresh.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
