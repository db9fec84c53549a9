//! Tests of the announce step: one at a time per run, the prompts, and a failing store.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::store::{NewSubagent, RunEnd, RunStatus};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};

/// A config whose one model is `fake`'s.
fn on_model(fake: &FakeModel) -> String {
    format!(
        r#"{{models: {{providers: {{fake: {{api: "openai-chat", baseUrl: "{}", apiKey: "k",
            models: [{{id: "m"}}]}}}}}}, agents: {{defaults: {{model: "fake/m"}}}}}}"#,
        fake.base_url()
    )
}

/// An announce scheduled twice, by its run's end and by the start-up recovery (a child
/// that ends between the two at start), asks the child once. (Catches: no guard, so
/// two announce steps ran: two model calls.)
#[tokio::test]
async fn an_announce_scheduled_twice_asks_the_child_once() {
    let fake = FakeModel::start().await.unwrap();
    // The first announce step is still waiting for the model when recovery runs.
    let gate = Gate::new();
    fake.push_for(
        "Your task has ended",
        Step::gated(&gate, Step::text("all done")),
    );
    let (_dir, rt) = crate::runtime::testing::runtime(&on_model(&fake)).await;
    let spawn = NewSubagent::fixture("c1", "agent:main:subagent:c1", "sid-c1");
    rt.store.create_subagent(&spawn, None).await.unwrap();
    let end = RunEnd::bare(RunStatus::Succeeded, None);
    assert!(rt.store.finish_run("c1", &end).await.unwrap().announce);

    schedule(&rt, "c1");
    assert_eq!(recover(&rt).await.unwrap(), 1, "still pending");
    gate.open();
    rt.tasks.tracker.close();
    tokio::time::timeout(Duration::from_secs(20), rt.tasks.tracker.wait())
        .await
        .unwrap();
    assert_eq!(fake.request_count(), 1);
    let row = rt.store.subagent("c1").await.unwrap().unwrap();
    assert_eq!(row.announce_state, crate::store::AnnounceState::Queued);
}

#[test]
fn the_prompt_says_how_the_run_ended_and_only_runs_that_ended_on_their_own_get_one() {
    assert_eq!(
        prompt_for("success", None).as_deref(),
        Some(ANNOUNCE_PROMPT)
    );
    let error = prompt_for("error", Some("the model call failed:\n400")).unwrap();
    assert!(
        error.starts_with("Your task has ended with an error (the model call failed: 400). "),
        "{error}"
    );
    let timeout = prompt_for("timeout", Some("the run timed out after 1s")).unwrap();
    assert!(
        timeout
            .starts_with("Your task has ended: it ran out of time (the run timed out after 1s). "),
        "{timeout}"
    );
    for p in [&error, &timeout] {
        assert!(p.ends_with("reply exactly ANNOUNCE_SKIP."), "{p}");
    }
    assert_eq!(prompt_for("cancelled", Some("stopped")), None);
    assert_eq!(prompt_for("interrupted", None), None);
}

/// An announce the store cannot complete (here its outbox row is refused) is retried with
/// the outbox's backoff (1 s, 2 s, 4 s, 8 s) and marked `failed` after five attempts;
/// without a model the child's last reply is what it tries to post. Runs on tokio's paused
/// clock. (Catches: no retry, a retry without backoff, or retries forever.)
#[tokio::test(start_paused = true)]
async fn an_announce_that_cannot_be_stored_is_retried_with_backoff_then_failed() {
    let (_dir, rt) = crate::runtime::testing::runtime_in_memory("{}").await;
    let origin =
        switchboard_channels::Origin::webchat("main", switchboard_channels::ChatKind::Direct);
    let spawn = NewSubagent {
        requester_origin: Some(&origin),
        ..NewSubagent::fixture("c2", "agent:main:subagent:c2", "sid-c2")
    };
    rt.store.create_subagent(&spawn, None).await.unwrap();
    let end = RunEnd::bare(RunStatus::Succeeded, None);
    assert!(rt.store.finish_run("c2", &end).await.unwrap().announce);
    rt.store
        .execute_for_tests(
            "CREATE TRIGGER test_outbox_down BEFORE INSERT ON outbox
             BEGIN SELECT RAISE(ABORT, 'disk unavailable'); END",
        )
        .await
        .unwrap();

    let started = tokio::time::Instant::now();
    schedule(&rt, "c2");
    // Bounded by iterations of paused time (a timeout would be advanced past while the
    // store's thread works).
    let mut row = rt.store.subagent("c2").await.unwrap().unwrap();
    for _ in 0..20_000 {
        if row.announce_state != crate::store::AnnounceState::Pending {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        row = rt.store.subagent("c2").await.unwrap().unwrap();
    }
    let took = started.elapsed();
    assert_eq!(
        (row.announce_state.as_str(), row.announce_attempts),
        ("failed", MAX_ATTEMPTS)
    );
    let backoff: Duration = (1..MAX_ATTEMPTS).map(crate::outbox::backoff).sum();
    assert_eq!(backoff, Duration::from_secs(15));
    // Each wait is drawn from the upper half of its ceiling (jitter); the paused clock also
    // jumps ahead while the store's thread works, so the upper bound is loose.
    assert!(
        took >= backoff / 2 && took < backoff + Duration::from_secs(30),
        "failed after {took:?}"
    );
    assert_eq!(rt.store.outbox_state("announce:c2").await.unwrap(), None);
}

/// More announces than permits: those waiting for a permit are queued run ids, not tasks,
/// and each runs once a permit frees. (Catches: a task per waiting announce, which held
/// its whole future's memory: a burst of 100,000 children grew past 370 MB.)
#[tokio::test]
async fn announces_beyond_the_permits_wait_as_run_ids_and_all_run_once() {
    const CHILDREN: usize = ANNOUNCE_CONCURRENCY * 2 + 3;
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    for _ in 0..CHILDREN {
        fake.push_for(
            "Your task has ended",
            Step::gated(&gate, Step::text("all done")),
        );
    }
    let (_dir, rt) = crate::runtime::testing::runtime(&on_model(&fake)).await;
    let ids: Vec<String> = (0..CHILDREN).map(|i| format!("c{i}")).collect();
    for id in &ids {
        let key = format!("agent:main:subagent:{id}");
        let session_id = format!("sid-{id}");
        let spawn = NewSubagent::fixture(id, &key, &session_id);
        rt.store.create_subagent(&spawn, None).await.unwrap();
        let end = RunEnd::bare(RunStatus::Succeeded, None);
        assert!(rt.store.finish_run(id, &end).await.unwrap().announce);
    }

    let tasks_before = rt.tasks.tracker.len();
    for id in &ids {
        schedule(&rt, id);
    }
    // Every permit's step reaches the model and waits there; the rest wait unstarted.
    tokio::time::timeout(Duration::from_secs(20), async {
        while fake.request_count() < ANNOUNCE_CONCURRENCY {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(fake.request_count(), ANNOUNCE_CONCURRENCY);
    assert_eq!(
        rt.tasks.tracker.len() - tasks_before,
        ANNOUNCE_CONCURRENCY,
        "one task per permit, none per waiting announce"
    );

    gate.open();
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let mut done = 0;
            for id in &ids {
                let row = rt.store.subagent(id).await.unwrap().unwrap();
                done += usize::from(row.announce_state == crate::store::AnnounceState::Queued);
            }
            if done == CHILDREN {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    assert_eq!(fake.request_count(), CHILDREN, "each child asked once");
}
