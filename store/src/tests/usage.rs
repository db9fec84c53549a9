//! What runs used and cost, read back on each engine: a session's totals and its latest
//! prompt tokens, and the totals of an agent (or every agent) since a moment.

use super::*;

/// Run `id` of session `s`, its message accepted and the run started (claimed).
async fn started(store: &Store, a: &Origin, s: &SessionRow, id: &str) {
    store
        .accept_message(&inbound(KEY, a, id, None), Some(&run(id, KEY, &s.id, a)))
        .await
        .unwrap();
    store
        .start_run(id, KEY, &s.id, None, Some(Claim::All))
        .await
        .unwrap()
        .unwrap();
}

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
        started(&store, &a, &s, id).await;
        let end = RunEnd {
            input_tokens: input,
            output_tokens: output,
            cost_usd: cost,
            context_tokens: Some(input * 3),
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
    for (i, (id, model, cost)) in [("m1", "main/big", 0.5), ("m2", "backup/small", 0.125)]
        .into_iter()
        .enumerate()
    {
        started(&store, &a, &s, id).await;
        let call = CallUsage {
            steps: 1,
            input_tokens: 40,
            output_tokens: 4,
            context_tokens: 40,
            cost_usd: Some(cost),
        };
        store.record_model_call(id, &call).await.unwrap();
        let live = store.session_usage(&s.key, &s.id).await.unwrap();
        assert!(
            live.cost_usd.is_some_and(|c| c >= cost),
            "the running cost counts before the end: {live:?}"
        );
        let runs = i as i64 + 1;
        assert_eq!(
            (live.runs, live.input_tokens, live.output_tokens),
            (runs, 40 * runs, 4 * runs),
            "the running tokens count before the end"
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

/// Catches: a final answer's prompt tokens (stored with the run's end, not by a statement
/// of their own) lost, an end without them wiping what a tool round recorded, or an
/// ended run's figure changed by a second end, on either engine.
pub(super) async fn a_runs_end_stores_its_last_calls_context_tokens(db: Db) {
    let (_d, store, a, s) = chat_store(db).await;
    for (id, recorded, at_end, want) in [
        ("c1", Some(40), None, 40),
        ("c2", Some(40), Some(90), 90),
        ("c3", None, Some(120), 120),
    ] {
        started(&store, &a, &s, id).await;
        if let Some(tokens) = recorded {
            let call = CallUsage {
                context_tokens: tokens,
                ..CallUsage::default()
            };
            store.record_model_call(id, &call).await.unwrap();
        }
        let end = RunEnd {
            context_tokens: at_end,
            ..RunEnd::bare(RunStatus::Succeeded, None)
        };
        store.finish_run(id, &end).await.unwrap();
        let context = store.session_context_tokens(&s.key, &s.id).await.unwrap();
        assert_eq!(context, Some(want), "{id}");
    }
    let again = RunEnd {
        context_tokens: Some(7),
        ..RunEnd::bare(RunStatus::Failed, None)
    };
    assert!(store.finish_run("c3", &again).await.is_err());
    let context = store.session_context_tokens(&s.key, &s.id).await.unwrap();
    assert_eq!(context, Some(120), "an ended run keeps its own");
}

/// Catches: a tool-calling answer stored without its usage or the usage without the
/// answer (they are one transaction on SQLite), its tool calls lost, or the sequence
/// number returned not the message's, on either engine.
pub(super) async fn a_call_answer_is_stored_with_its_usage(db: Db) {
    let (_d, store, a, s) = chat_store(db).await;
    let id = "t1";
    started(&store, &a, &s, id).await;
    let usage = CallUsage {
        steps: 1,
        input_tokens: 300,
        output_tokens: 20,
        context_tokens: 300,
        cost_usd: Some(0.01),
    };
    let calls = vec![ToolCallRecord {
        id: "call-1".into(),
        name: "exec".into(),
        arguments: r#"{"command":"echo hi"}"#.into(),
    }];
    let answer = NewMessage::assistant("running it", calls.clone());
    let seq = store
        .record_call_answer(id, &s.id, &usage, &answer)
        .await
        .unwrap();
    let transcript = store.transcript(&s.id).await.unwrap();
    let last = transcript.last().unwrap();
    assert_eq!(
        (last.seq, last.run_id.as_deref(), last.content.as_str()),
        (seq, Some(id), "running it")
    );
    assert_eq!(last.tool_calls, calls);
    let live = store.session_usage(&s.key, &s.id).await.unwrap();
    assert_eq!(
        (live.input_tokens, live.output_tokens, live.cost_usd),
        (300, 20, Some(0.01))
    );
    let run = store.get_run(id).await.unwrap().unwrap();
    assert_eq!(run.steps, 1);
    assert_eq!(
        store.session_context_tokens(&s.key, &s.id).await.unwrap(),
        Some(300)
    );
}
