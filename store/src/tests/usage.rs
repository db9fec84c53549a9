//! What runs used and cost, read back on each engine: a session's totals and its latest
//! prompt tokens, and the totals of an agent (or every agent) since a moment.

use super::*;

/// Catches: totals summed over the wrong rows (another session, another agent, before the
/// day), a sum of BIGINT read as NUMERIC on PostgreSQL, and the context tokens of an older
/// run taken for the latest.
pub(super) async fn usage_is_summed_per_session_agent_and_day(db: Db) {
    let (_d, store, a, s) = chat_store(db).await;
    let empty = store.session_usage(&s.key, &s.id).await.unwrap();
    assert_eq!(empty, UsageTotals::default());
    assert_eq!(
        store.session_context_tokens(&s.key, &s.id).await.unwrap(),
        None
    );
    let since = now_ms();
    for (id, input, output, cost) in [("u1", 100, 10, Some(0.25)), ("u2", 50, 5, None)] {
        store
            .accept_message(&inbound(KEY, &a, id, None), Some(&run(id, KEY, &s.id, &a)))
            .await
            .unwrap();
        store
            .start_run(id, KEY, &s.id, None, Some(Claim::All))
            .await
            .unwrap()
            .unwrap();
        store.record_context_tokens(id, input * 3).await.unwrap();
        let end = RunEnd {
            input_tokens: input,
            output_tokens: output,
            cost_usd: cost,
            ..RunEnd::bare(RunStatus::Succeeded, None)
        };
        store.finish_run(id, &end).await.unwrap();
    }
    let want = UsageTotals {
        runs: 2,
        input_tokens: 150,
        output_tokens: 15,
        cost_usd: Some(0.25),
    };
    assert_eq!(store.session_usage(&s.key, &s.id).await.unwrap(), want);
    assert_eq!(
        store.session_context_tokens(&s.key, &s.id).await.unwrap(),
        Some(150)
    );
    assert_eq!(store.usage_since(Some("main"), since).await.unwrap(), want);
    assert_eq!(store.usage_since(None, since).await.unwrap(), want);
    assert_eq!(
        store.usage_since(Some("other"), since).await.unwrap(),
        UsageTotals::default()
    );
    assert_eq!(
        store.usage_since(None, now_ms() + 60_000).await.unwrap(),
        UsageTotals::default()
    );
}

/// Catches: a model call's running cost not stored while the run goes on (a budget blind
/// to a long run), a finished run's cost not the one it ended with, and runs not split by
/// the model that served them, on either engine.
pub(super) async fn a_runs_cost_counts_while_it_runs_and_is_split_by_serving_model(db: Db) {
    let (_d, store, a, s) = chat_store(db).await;
    for (id, model, cost) in [("m1", "main/big", 0.5), ("m2", "backup/small", 0.125)] {
        store
            .accept_message(&inbound(KEY, &a, id, None), Some(&run(id, KEY, &s.id, &a)))
            .await
            .unwrap();
        store
            .start_run(id, KEY, &s.id, None, Some(Claim::All))
            .await
            .unwrap()
            .unwrap();
        store.record_model_call(id, 40, Some(cost)).await.unwrap();
        let live = store.session_usage(&s.key, &s.id).await.unwrap();
        assert!(
            live.cost_usd.is_some_and(|c| c >= cost),
            "the running cost counts before the end: {live:?}"
        );
        let end = RunEnd {
            model: Some(model.into()),
            input_tokens: 40,
            output_tokens: 4,
            cost_usd: Some(cost),
            ..RunEnd::bare(RunStatus::Succeeded, None)
        };
        store.finish_run(id, &end).await.unwrap();
    }
    let by_model = store.session_usage_by_model(&s.key, &s.id).await.unwrap();
    let names: Vec<&str> = by_model.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(names, ["main/big", "backup/small"], "most expensive first");
    assert_eq!(by_model[1].1.runs, 1);
    assert_eq!(by_model[1].1.cost_usd, Some(0.125));
    assert_eq!(
        store.session_context_tokens(&s.key, &s.id).await.unwrap(),
        Some(40)
    );
}
