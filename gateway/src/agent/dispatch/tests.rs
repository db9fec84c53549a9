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
    // Until it has ended and stopped being the session's active run.
    let status = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let run = rt.store.get_run(&id).await.unwrap().unwrap();
            if run.status.is_terminal() && rt.active_run(key).is_none() {
                return run.status;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(status, RunStatus::Cancelled);
}

/// At start with `subagents.onRestart: "interrupt"`, a child whose run was mid-flight
/// ends as interrupted, and a message sent to it that no run took yet (`/subagents send`)
/// still gets a run. (Catches: recovery skipping the inbox of every session that had an
/// unfinished run, the interrupted ones included, which left that message waiting.)
#[tokio::test]
async fn recovery_interrupts_a_mid_flight_child_and_still_runs_its_waiting_message() {
    let (_dir, rt) =
        testing::runtime("{agents: {defaults: {subagents: {onRestart: \"interrupt\"}}}}").await;
    let key = "agent:main:subagent:c1";
    let spawn = crate::store::NewSubagent::fixture("c1", key, "sid-c1");
    rt.store.create_subagent(&spawn, None).await.unwrap();
    // Mid-flight when the process stopped: it had claimed its task.
    rt.store
        .start_run("c1", key, "sid-c1", None, Some(crate::store::Claim::All))
        .await
        .unwrap()
        .unwrap();
    let origin = Origin {
        channel: "internal".into(),
        account: None,
        chat_id: "agent:main:main".into(),
        thread_id: None,
        kind: switchboard_channels::ChatKind::Direct,
        reply_handle: None,
    };
    rt.store
        .push_inbox(key, &origin, "agent:main:main", "one more thing")
        .await
        .unwrap();

    assert_eq!(
        recover(&rt).await.unwrap(),
        1,
        "a run for the waiting message"
    );
    let child = rt.store.subagent("c1").await.unwrap().unwrap();
    assert_eq!(child.outcome, Some(crate::store::Outcome::Interrupted));
    assert!(rt.lanes.get(queue::SUBAGENT).stats().started_total >= 1);
}
