//! What runs used and cost, read back on each engine: a session's totals and its latest
//! prompt tokens, and the totals of an agent (or every agent) since a moment.

use super::*;

/// Catches: totals summed over the wrong rows (another session, another agent, before the
/// day), a sum of BIGINT read as NUMERIC on PostgreSQL, and the context tokens of an older
/// run taken for the latest.
pub(super) async fn usage_is_summed_per_session_agent_and_day(db: Db) {
    let (_d, store, a, s) = chat_store(db).await;
    let empty = store.session_usage(&s.id).await.unwrap();
    assert_eq!(empty, UsageTotals::default());
    assert_eq!(store.session_context_tokens(&s.id).await.unwrap(), None);
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
    assert_eq!(store.session_usage(&s.id).await.unwrap(), want);
    assert_eq!(
        store.session_context_tokens(&s.id).await.unwrap(),
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
