//! Durable timers: archive a child session `archiveAfterMinutes` after its run ended (or
//! right after the announce with `cleanup: "delete"`). Timers live in the store, so they
//! are re-armed at start; overdue ones fire at once.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::events::Event;
use crate::runtime::Runtime;
use crate::store::now_ms;

/// Longest sleep between checks (a missed wake-up costs at most this).
const MAX_SLEEP: Duration = Duration::from_secs(60);

pub async fn run(rt: Arc<Runtime>, cancel: CancellationToken) {
    loop {
        let wake = rt.tasks.timers_wake.notified();
        let wait = match rt.store.next_timer().await {
            Ok(Some((id, kind, target, due))) if due <= now_ms() => {
                if kind == "archive" {
                    match rt.store.fire_archive_timer(id, &target).await {
                        Ok(false) => {} // fired by another process (shared mode)
                        Ok(true) => {
                            tracing::info!(session = %target, "sub-agent session archived");
                            rt.emit(Event::SubagentArchived {
                                child_session_key: target,
                            });
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
        let key = crate::session_key::SessionKey::subagent("main", n.to_string()).to_string();
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
    /// once, a near one when it is due and not before (its archive time is at or after its
    /// due time), a far one not during the test; the transcript rows stay (archived).
    /// (Catches: timers fired without looking at their due time, or the worker sleeping
    /// past a due timer.) The due times are wall-clock (they survive restarts), so this
    /// test waits about a second of real time.
    #[tokio::test]
    async fn overdue_timers_fire_at_once_and_future_ones_when_due() {
        let store = Store::open_in_memory().await.unwrap();
        let (overdue_run, overdue_key) = child(&store, 1).await;
        let (soon_run, soon_key) = child(&store, 2).await;
        let (far_run, far_key) = child(&store, 3).await;
        store
            .finish_run(&overdue_run, &ended(-60_000))
            .await
            .unwrap();
        store.finish_run(&soon_run, &ended(1_000)).await.unwrap();
        store.finish_run(&far_run, &ended(3_600_000)).await.unwrap();

        let dir = tempfile::tempdir().unwrap();
        let (_tx, rx) = tokio::sync::watch::channel(std::sync::Arc::new(Config::default()));
        let rt = Runtime::new(
            store.clone(),
            rx,
            EnvKeys::default(),
            crate::runtime::Home::new(dir.path().to_path_buf(), None),
            CancellationToken::new(),
            Default::default(),
        );
        let cancel = CancellationToken::new();
        let worker = tokio::spawn(run(rt.clone(), cancel.clone()));

        let archived = |key: String| {
            let store = store.clone();
            async move { store.active_session(&key).await.unwrap().is_none() }
        };
        let wait_archived = |key: String, bound: Duration| async move {
            tokio::time::timeout(bound, async {
                while !archived(key.clone()).await {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
            .await
            .is_ok()
        };
        assert!(
            wait_archived(overdue_key.clone(), Duration::from_secs(5)).await,
            "the overdue timer fired at once"
        );
        assert!(
            wait_archived(soon_key.clone(), Duration::from_secs(10)).await,
            "the near timer fired when due"
        );
        let soon = store.subagent(&soon_run).await.unwrap().unwrap();
        let (due, fired) = (soon.archive_at.unwrap(), soon.archived_at.unwrap());
        assert!(fired >= due, "fired at {fired}, before its time {due}");
        assert!(!archived(far_key.clone()).await, "the far timer waits");
        assert_eq!(
            store.subagent(&far_run).await.unwrap().unwrap().archived_at,
            None
        );

        let row = store.subagent(&overdue_run).await.unwrap().unwrap();
        assert!(row.archived_at.is_some());
        assert_eq!(
            store
                .latest_session(&overdue_key)
                .await
                .unwrap()
                .unwrap()
                .status,
            crate::store::SessionStatus::Archived
        );
        let next = store.next_timer().await.unwrap().map(|t| t.2);
        assert_eq!(next, Some(far_key), "only the far timer is left");
        cancel.cancel();
        tokio::time::timeout(Duration::from_secs(5), worker)
            .await
            .expect("the worker stops on cancel")
            .unwrap();
    }
}
