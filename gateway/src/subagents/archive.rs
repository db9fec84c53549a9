//! Durable timers: archive a child session `archiveAfterMinutes` after its run ended (or
//! right after the announce with `cleanup: "delete"`). Timers live in the store, so they
//! are re-armed at start; overdue ones fire at once.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::runtime::Runtime;
use crate::store::now_ms;

/// Longest sleep between checks (a missed wake-up costs at most this).
const MAX_SLEEP: Duration = Duration::from_secs(60);

pub async fn run(rt: Arc<Runtime>, cancel: CancellationToken) {
    loop {
        let wake = rt.timers_wake.notified();
        let wait = match rt.store.next_timer().await {
            Ok(Some((id, kind, target, due))) if due <= now_ms() => {
                if kind == "archive" {
                    match rt.store.fire_archive_timer(id, &target).await {
                        Ok(()) => {
                            tracing::info!(session = %target, "sub-agent session archived");
                            rt.emit(serde_json::json!({"type": "subagent.archived", "childSessionKey": target}));
                        }
                        Err(e) => {
                            tracing::error!(session = %target, error = %e, "cannot archive; retrying in 1s");
                            tokio::select! {
                                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                                _ = cancel.cancelled() => return,
                            }
                        }
                    }
                }
                continue;
            }
            Ok(Some((_, _, _, due))) => {
                Duration::from_millis((due - now_ms()).max(0) as u64).min(MAX_SLEEP)
            }
            Ok(None) => MAX_SLEEP,
            Err(e) => {
                tracing::error!(error = %e, "cannot read timers");
                Duration::from_secs(1)
            }
        };
        tokio::select! {
            _ = wake => {}
            _ = tokio::time::sleep(wait) => {}
            _ = cancel.cancelled() => return,
        }
    }
}
