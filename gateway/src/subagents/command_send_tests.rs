//! `/subagents send`'s wait for the child's answer, on tokio's paused clock.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::store::{NewSubagent, RunEnd, RunStatus};

/// A child that ended (so `send` starts a follow-up run of it) under `agent:main:main`.
async fn ended_child(rt: &Runtime) {
    let spawn = NewSubagent {
        run_id: "c1",
        child_session_key: "agent:main:subagent:c1",
        child_session_id: "sid-c1",
        requester_session_key: "agent:main:main",
        requester_run_id: None,
        requester_origin: None,
        task: "look around",
        label: None,
        agent_id: "main",
        model: None,
        thinking: None,
        cleanup: crate::store::Cleanup::Keep,
        run_timeout_seconds: 0,
        task_call_id: None,
    };
    rt.store.create_subagent(&spawn, None).await.unwrap();
    let end = RunEnd::bare(RunStatus::Succeeded, None);
    rt.store.finish_run("c1", &end).await.unwrap();
}

/// A child that does not answer within 30 s: `/subagents send` says it is still running,
/// after 30 s (of paused time) and not before. Here its run cannot even start: every
/// `subagent` slot is taken. (Catches: `SEND_WAIT` shortened or the wait dropped, which
/// answered at once; or no bound, which left the command unanswered.)
#[tokio::test(start_paused = true)]
async fn send_says_still_running_after_thirty_seconds() {
    let (_dir, rt) = crate::runtime::testing::runtime_in_memory("{}").await;
    ended_child(&rt).await;
    let lane = rt.lanes.get(crate::queue::SUBAGENT);
    let slots: Vec<_> = (0..lane.stats().cap)
        .map(|i| lane.try_start(&format!("other-{i}")).unwrap())
        .collect();
    let started = tokio::time::Instant::now();
    let cmd = SubCommand::Send {
        target: "1".into(),
        message: "anything new?".into(),
    };
    let command = tokio::spawn({
        let rt = rt.clone();
        async move { execute(&rt, "agent:main:main", cmd).await }
    });
    // Bounded by iterations of paused time (a timeout would be advanced past while the
    // store's thread works): 60 s of it.
    for _ in 0..6_000 {
        if command.is_finished() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(command.is_finished(), "no answer within 60 s");
    let answer = command.await.unwrap().unwrap();
    let waited = started.elapsed();
    assert_eq!(
        answer,
        "Sub-agent c1 is still running; see /subagents log c1 later."
    );
    // Not before the 30 s; the paused clock also jumps ahead while the store's thread
    // works, so the upper bound is loose.
    assert!(
        (SEND_WAIT..SEND_WAIT + Duration::from_secs(30)).contains(&waited),
        "answered after {waited:?}"
    );
    assert_eq!(
        SEND_WAIT,
        Duration::from_secs(30),
        "docs/subagents.md says 30 s"
    );
    // The message waits for the child (it is not dropped).
    assert_eq!(lane.stats().depth, 1);
    drop(slots);
}
