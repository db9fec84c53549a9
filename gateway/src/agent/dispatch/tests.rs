//! Dispatch: a run is its session's active run from the moment its lane starts it.

use std::time::Duration;

use super::*;
use crate::runtime::testing;
use crate::store::RunStatus;

/// `/stop` right after its lane started a run, before the run got to its first await,
/// stops it. (Catches: a run made its session's active run only after its first
/// awaits, so that `/stop` found nothing to stop and the run went on.)
#[tokio::test]
async fn stop_catches_a_run_its_lane_has_just_started() {
    let (_dir, rt) = testing::runtime("{}").await;
    let key = "agent:main:main";
    let session = rt.store.ensure_session(key, "main", None).await.unwrap();
    let id = enqueue_new_run(&rt, key, "main", &session.id, true, None)
        .await
        .unwrap();
    // The lane had a free slot and started it; nothing has awaited since.
    assert_eq!(rt.active_run(key).map(|a| a.run_id), Some(id.clone()));
    assert_eq!(
        crate::commands::session::stop(&rt, key).await.unwrap(),
        "Stopped 1 run."
    );
    let status = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let run = rt.store.get_run(&id).await.unwrap().unwrap();
            if run.status.is_terminal() {
                return run.status;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(status, RunStatus::Cancelled);
    assert!(rt.active_run(key).is_none());
}
