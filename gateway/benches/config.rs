//! Parsing and validating the complete example config (JSON5 → strict schema → checks).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use switchboard::config::parse_config;

const EXAMPLE: &str = include_str!("../../config.example.json5");

fn config(c: &mut Criterion) {
    // Every `${VAR}` resolves, so the example is valid.
    let env = |_: &str| Some("x".to_owned());
    assert!(
        parse_config(EXAMPLE, &env).is_ok(),
        "config.example.json5 must parse"
    );
    let mut group = c.benchmark_group("parse_config");
    group.throughput(Throughput::Bytes(EXAMPLE.len() as u64));
    group.bench_function("config_example_json5", |b| {
        b.iter(|| parse_config(black_box(EXAMPLE), &env))
    });
    group.finish();
}

criterion_group!(benches, config);
criterion_main!(benches);
