//! Lane throughput: enqueue 10,000 no-op jobs and wait until all have completed, on a
//! two-worker tokio runtime (the daemon's shape on a 2-core machine).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use switchboard::queue::{Job, Lane};

const JOBS: usize = 10_000;

/// Enqueues `JOBS` no-op jobs spread over `keys`, then waits for the last one.
async fn enqueue_and_complete(lane: &Arc<Lane>, keys: &[String]) {
    let before = lane.stats().completed_total;
    for i in 0..JOBS {
        lane.enqueue(Job {
            run_id: i.to_string(),
            session_key: keys[i % keys.len()].clone(),
            work: Box::new(|| Box::pin(async {})),
        });
    }
    // `wait_idle` returns when no job runs; a finishing job frees its slot before the next
    // queued one starts, so check the count too.
    while lane.stats().completed_total - before < JOBS as u64 {
        lane.wait_idle().await;
        tokio::task::yield_now().await;
    }
    black_box(lane.stats());
}

fn lanes(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("lane_10k_noop_jobs");
    // One iteration is 10,000 jobs; ten samples are plenty.
    group.sample_size(10);
    group.throughput(Throughput::Elements(JOBS as u64));
    // (sessions, cap): every job its own session (sub-agents), 100 busy sessions (chats with
    // queued turns: per-session serialization), one session (everything queues behind one).
    for (sessions, cap) in [(JOBS, 64), (100, 64), (JOBS, 8), (1, 8)] {
        let keys: Vec<String> = (0..sessions)
            .map(|i| format!("agent:main:bench:group:{i}"))
            .collect();
        let lane = Lane::new("main", cap);
        group.bench_with_input(
            BenchmarkId::new(format!("cap{cap}"), format!("{sessions}_sessions")),
            &keys,
            |b, keys| b.iter(|| rt.block_on(enqueue_and_complete(&lane, keys))),
        );
    }
    group.finish();
}

criterion_group!(benches, lanes);
criterion_main!(benches);
