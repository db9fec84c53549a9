//! Rendering the announce message (`Status / Result / Notes / Stats`).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use switchboard::subagents::render::{render, Announce};

fn announce(c: &mut Criterion) {
    let short = Announce {
        status: "success",
        result: Some("Found 3 flaky tests; fixed 2.".into()),
        notes: None,
        runtime: Duration::from_secs(312),
        input_tokens: 10_000,
        output_tokens: 2_300,
        cost_usd: Some(0.0421),
        session_key: "agent:main:subagent:5a1d0c7e-0000-4000-8000-000000000001".into(),
        session_id: "9f8e7d6c-0000-4000-8000-000000000002".into(),
        transcript: "/api/sessions/agent:main:subagent:5a1d0c7e-0000-4000-8000-000000000001/transcript?sessionId=9f8e7d6c-0000-4000-8000-000000000002".into(),
    };
    let long = Announce {
        status: "error",
        result: Some("A longer result paragraph. ".repeat(150)),
        notes: Some("the model call failed after 3 retries: 503 upstream overloaded".into()),
        runtime: Duration::from_millis(3_723_456),
        input_tokens: 1_234_567,
        output_tokens: 45_678,
        cost_usd: Some(0.000_42),
        ..short.clone()
    };
    c.bench_function("announce_render_short", |b| {
        b.iter(|| render(black_box(&short)))
    });
    c.bench_function("announce_render_4kb_result", |b| {
        b.iter(|| render(black_box(&long)))
    });
}

criterion_group!(benches, announce);
criterion_main!(benches);
