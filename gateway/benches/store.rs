//! The database's share of a turn, on a real SQLite file in WAL mode: what one statement
//! round trip to a sqlx-sqlite connection costs, and what the writes of one turn cost.
//!
//! Every sqlx-sqlite statement is a hand-off to the connection's own worker thread and
//! back (two thread wake-ups), so these figures are mostly the machine's cost of a
//! cross-thread wake-up, times the statements a durable turn needs.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use switchboard::store::{NewInbound, NewMessage, NewRun, RunEnd, RunStatus, Store};
use switchboard_channels::{ChatKind, Origin};

fn store(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store = rt.block_on(Store::open(&url)).unwrap();
    let origin = Origin::webchat("bench", ChatKind::Direct);
    let key = "agent:main:bench";
    rt.block_on(store.ensure_session(key, "main", Some(&origin)))
        .unwrap();

    c.bench_function("store_ensure_session_cached", |b| {
        b.iter(|| {
            rt.block_on(store.ensure_session(black_box(key), "main", Some(&origin)))
                .unwrap()
        })
    });
    c.bench_function("store_one_write_round_trip", |b| {
        // One INSERT (autocommit) on the writer: the unit every write pays.
        b.iter(|| {
            rt.block_on(store.push_inbox("agent:main:sink", &origin, "u", "x"))
                .unwrap()
        })
    });
    c.bench_function("store_one_read_round_trip", |b| {
        b.iter(|| rt.block_on(store.inbox_len(black_box(key))).unwrap())
    });
    c.bench_function("store_64_concurrent_accepts", |b| {
        // 64 messages accepted at once (as by 64 sessions): the group-commit writer runs
        // them as one batch (chunks of 16), one transaction. Divide by 64 for per message.
        b.iter(|| {
            rt.block_on(futures::future::join_all((0..64).map(|i| {
                let (store, origin) = (&store, &origin);
                async move {
                    let key = format!("agent:main:many-{i}");
                    store
                        .accept_message(
                            &NewInbound {
                                session_key: &key,
                                origin,
                                sender_id: "u",
                                text: "hello",
                                message_id: None,
                            },
                            None,
                        )
                        .await
                        .unwrap()
                }
            })))
        })
    });
    let mut turns = 0u64;
    c.bench_function("store_turn_writes", |b| {
        // The store's part of one API turn to an idle session, in order: message in with
        // its run started (the message claimed, the transcript read), run ended with its
        // answer stored (two scripts). A session takes 10 turns, then the next (whose
        // creation is a script too).
        b.iter(|| {
            turns += 1;
            let (store, origin, n) = (store.clone(), origin.clone(), turns);
            // On a runtime worker, as a turn runs in the daemon (from `block_on`'s own
            // thread every hand-off to the writer task would wake a worker thread too).
            let turn = rt.spawn(async move {
                let key = format!("agent:main:bench-{}", n / 10);
                let session = store
                    .ensure_session(&key, "main", Some(&origin))
                    .await
                    .unwrap();
                let id = uuid::Uuid::new_v4().to_string();
                let run = NewRun {
                    id: &id,
                    session_key: &key,
                    session_id: &session.id,
                    agent_id: "main",
                    lane: "main",
                    claim_all: true,
                    origin: Some(&origin),
                    model: None,
                    timeout_ms: None,
                };
                let (_, _, started) = store
                    .accept_and_start(
                        &NewInbound {
                            session_key: &key,
                            origin: &origin,
                            sender_id: "u",
                            text: "hello",
                            message_id: None,
                        },
                        &run,
                        Some("m/x"),
                    )
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!(started.claimed.len(), 1);
                let end = RunEnd {
                    steps: 1,
                    input_tokens: 10,
                    output_tokens: 5,
                    reply: Some("hi".into()),
                    ..RunEnd::bare(RunStatus::Succeeded, None)
                };
                let last = NewMessage::assistant("hi", Vec::new());
                store
                    .finish_run_with(&id, &end, Some((&session.id, &last)))
                    .await
                    .unwrap()
            });
            rt.block_on(turn).unwrap()
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = store
}
criterion_main!(benches);
