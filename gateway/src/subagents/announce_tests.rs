//! Tests of the announce step: one at a time per run, the prompts, and a failing store.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::store::{NewSubagent, RunEnd, RunStatus};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};

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
    let config = format!(
        r#"{{models: {{providers: {{fake: {{api: "openai-chat", baseUrl: "{}", apiKey: "k",
            models: [{{id: "m"}}]}}}}}}, agents: {{defaults: {{model: "fake/m"}}}}}}"#,
        fake.base_url()
    );
    let (_dir, rt) = crate::runtime::testing::runtime(&config).await;
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
