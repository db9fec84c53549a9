//! The copies of files the agent sends (`<state>/media/out/<id>/<name>`, made by
//! `agent::tools::outgoing` and named by the outbox row's `file`): where they live and their
//! removal once their row is done with (docs/media.md). The outbox owns them because it
//! alone knows when a row is delivered; `media::sweep` removes what a crash left.

use std::path::{Path, PathBuf};

use switchboard_channels::webchat::files::valid_id;
use switchboard_channels::OutboundFile;

use crate::runtime::Runtime;
use crate::store::OutboxRow;

/// Where the copies of sent files live.
pub fn out_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("media").join("out")
}

/// The id (folder name) of an outgoing copy, if `file` is one.
pub fn copy_id(file: &OutboundFile) -> Option<String> {
    let id = file.path.parent()?.file_name()?.to_str()?;
    valid_id(id).then(|| id.to_string())
}

/// After `row` was delivered and that state committed: remove its copy unless its
/// channel serves the copy as a download (the web chat; the sweep removes that one
/// after `media.keepDays`). A failure is only logged: the sweep tries again.
pub async fn remove_sent(rt: &Runtime, row: &OutboxRow) {
    if row.origin.channel == switchboard_channels::webchat::CHANNEL_ID {
        return;
    }
    remove_copy(rt, row).await;
}

/// Remove the copy of `row`'s file (a row that failed for good, or one delivered).
pub async fn remove_copy(rt: &Runtime, row: &OutboxRow) {
    let Some(id) = row.file.as_ref().and_then(copy_id) else {
        return;
    };
    let dir = out_dir(&rt.home.state_dir).join(id);
    if let Err(e) = tokio::fs::remove_dir_all(&dir).await {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot remove a sent file's copy");
        }
    }
}
