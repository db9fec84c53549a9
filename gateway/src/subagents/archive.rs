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
                            rt.emit_archived(&target, serde_json::json!({"type": "subagent.archived", "childSessionKey": target}));
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::runtime::EnvKeys;
    use crate::store::{NewSubagent, RunEnd, RunStatus, Store};

    async fn child(store: &Store, n: u32) -> (String, String) {
        let run_id = format!("run-{n}");
        let key = format!("agent:main:subagent:{n}");
        store
            .create_subagent(
                &NewSubagent::fixture(&run_id, &key, &format!("sess-{n}")),
                None,
            )
            .await
            .unwrap();
        (run_id, key)
    }

    fn ended(archive_after_ms: i64) -> RunEnd {
        RunEnd {
            steps: 1,
            input_tokens: 1,
            output_tokens: 1,
            archive_after_ms: Some(archive_after_ms),
            ..RunEnd::bare(RunStatus::Succeeded, None)
        }
    }

    /// Timers armed before the worker starts (as after a restart): the overdue one fires at
    /// once, the future one when it is due, and the transcript row stays (archived).
    #[tokio::test]
    async fn overdue_timers_fire_at_once_and_future_ones_when_due() {
        let store = Store::open_in_memory().await.unwrap();
        let (overdue_run, overdue_key) = child(&store, 1).await;
        let (later_run, later_key) = child(&store, 2).await;
        store
            .finish_run(&overdue_run, &ended(-60_000))
            .await
            .unwrap();
        store.finish_run(&later_run, &ended(400)).await.unwrap();

        let dir = tempfile::tempdir().unwrap();
        let (_tx, rx) = tokio::sync::watch::channel(std::sync::Arc::new(Config::default()));
        let rt = Runtime::new(
            store.clone(),
            rx,
            EnvKeys::default(),
            dir.path().to_path_buf(),
            CancellationToken::new(),
        );
        let cancel = CancellationToken::new();
        let worker = tokio::spawn(run(rt.clone(), cancel.clone()));

        let archived = |key: String| {
            let store = store.clone();
            async move { store.active_session(&key).await.unwrap().is_none() }
        };
        tokio::time::timeout(Duration::from_secs(2), async {
            while !archived(overdue_key.clone()).await {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the overdue timer fired at once");
        assert!(
            !archived(later_key.clone()).await,
            "the later timer waits for its time"
        );
        tokio::time::timeout(Duration::from_secs(3), async {
            while !archived(later_key.clone()).await {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the later timer fired when due");

        let row = store.subagent(&overdue_run).await.unwrap().unwrap();
        assert!(row.archived_at.is_some());
        assert_eq!(
            store
                .latest_session(&overdue_key)
                .await
                .unwrap()
                .unwrap()
                .status,
            "archived"
        );
        assert_eq!(store.next_timer().await.unwrap(), None);
        cancel.cancel();
        worker.await.unwrap();
    }
}
