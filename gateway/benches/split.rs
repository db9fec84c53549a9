//! Splitting a 20 KB reply into platform-sized chunks (Telegram 4096, Discord 2000 chars).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use switchboard_channels::split::split_text;

/// About 20 KB of prose: paragraphs of lines of words, one long unbroken token and a few
/// non-ASCII characters (the footer, a `Stats:` line kept whole, is [`FOOTER`]).
fn reply_text() -> String {
    let mut text = String::new();
    let mut paragraph = 0;
    while text.len() < 20_000 {
        paragraph += 1;
        for line in 0..4 {
            text.push_str(&format!(
                "Paragraph {paragraph}, line {line}: the quick brown fox jumps over the lazy dog — déjà vu, naïve café. "
            ));
            text.push('\n');
        }
        if paragraph % 7 == 0 {
            text.push_str(&"x".repeat(300));
            text.push('\n');
        }
        text.push('\n');
    }
    text
}

const FOOTER: &str = "Stats: runtime 5m12s • tokens 12.3k (in 10k / out 2.3k) • est $0.04 • sessionKey agent:main:subagent:x";

fn split(c: &mut Criterion) {
    let text = reply_text();
    let mut group = c.benchmark_group("split_text_20kb");
    group.throughput(Throughput::Bytes(text.len() as u64));
    for limit in [4096, 2000] {
        group.bench_with_input(BenchmarkId::from_parameter(limit), &limit, |b, &limit| {
            b.iter(|| split_text(black_box(&text), Some(FOOTER), limit))
        });
    }
    group.finish();
}

criterion_group!(benches, split);
criterion_main!(benches);
