//! Context fitting and compaction (docs/context.md): what fitting a request to a 128k
//! window costs before each model call at 10 %, 50 % and 90 % fill (the transcript turned
//! into model messages, estimated, and — at 90 %, past the compaction threshold — its old
//! tool results trimmed), and compaction's own cost beyond its model call (the summary
//! request written, a model that answers at once, the compaction committed to SQLite).
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use switchboard::agent::context::compact::{self, Summarizer};
use switchboard::agent::context::Window;
use switchboard::agent::provider::{
    ModelRequest, ModelResponse, Provider, ProviderError, RetryPolicy, ToolSpec, Usage,
};
use switchboard::config::Config;
use switchboard::store::{MessageRow, Role, Store, ToolCallRecord};
use switchboard_channels::{ChatKind, Origin};

const WINDOW_TOKENS: u64 = 128_000;

fn row(seq: i64, role: Role, content: String) -> MessageRow {
    MessageRow {
        seq,
        session_id: "s".into(),
        run_id: None,
        role,
        content,
        tool_calls: vec![],
        tool_call_id: None,
        tool_name: None,
        created_at: 0,
    }
}

/// A transcript of turns (a 1.5 KB message; a tool call with a 6 KB result; a 1 KB
/// answer) until its estimate reaches `fill` of the window.
fn transcript(window: &Window, fill: f64) -> Vec<MessageRow> {
    let mut rows = Vec::new();
    let mut seq = 0;
    let mut next = |rows: &mut Vec<MessageRow>, mut r: MessageRow| {
        seq += 1;
        r.seq = seq;
        rows.push(r);
    };
    while (window.fit(&rows).tokens as f64) < WINDOW_TOKENS as f64 * fill {
        let id = format!("call-{}", rows.len());
        next(&mut rows, row(0, Role::User, "u".repeat(1500)));
        let mut call = row(0, Role::Assistant, String::new());
        call.tool_calls = vec![ToolCallRecord {
            id: id.clone(),
            name: "read".into(),
            arguments: r#"{"path":"src/main.rs"}"#.into(),
        }];
        next(&mut rows, call);
        let mut result = row(0, Role::Tool, "r".repeat(6000));
        result.tool_call_id = Some(id);
        result.tool_name = Some("read".into());
        next(&mut rows, result);
        next(&mut rows, row(0, Role::Assistant, "a".repeat(1000)));
    }
    rows
}

fn tools() -> Vec<ToolSpec> {
    (0..20)
        .map(|i| ToolSpec {
            name: format!("tool_{i}"),
            description: "d".repeat(300),
            parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        })
        .collect()
}

fn fitting(c: &mut Criterion) {
    let cfg = Config::default();
    let system = "s".repeat(6000);
    let window = Window::new(&cfg, "x/y", 4096, &system, &tools(), None);
    let mut group = c.benchmark_group("context_fit_128k");
    for fill in [0.1, 0.5, 0.9] {
        let rows = transcript(&window, fill);
        let label = format!("{}pct_{}msgs", (fill * 100.0) as u32, rows.len());
        group.bench_with_input(BenchmarkId::from_parameter(label), &rows, |b, rows| {
            b.iter(|| window.fit(black_box(rows)))
        });
    }
    group.finish();
}

/// A model that answers a 1.2k-token summary at once.
struct Instant;

#[async_trait]
impl Provider for Instant {
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ProviderError> {
        Ok(ModelResponse {
            text: "s".repeat(4200),
            tool_calls: vec![],
            usage: Usage::default(),
            reasoning: Vec::new(),
            cut: false,
        })
    }
}

fn compaction(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store = rt.block_on(Store::open(&url)).unwrap();
    let origin = Origin::webchat("main", ChatKind::Direct);
    let session = rt
        .block_on(store.ensure_session("agent:main:main", "main", Some(&origin)))
        .unwrap();
    let cfg = Config::default();
    let window = Window::new(&cfg, "x/y", 4096, "", &[], None);
    let mut rows = transcript(&window, 0.5);
    for r in &mut rows {
        r.session_id = session.id.clone();
    }
    let provider: Arc<dyn Provider> = Arc::new(Instant);
    let who = Summarizer {
        provider: provider.as_ref(),
        model_id: "m",
        policy: RetryPolicy::new(0, Duration::from_secs(30)),
        max_tokens: 4096,
        budget: window.summary_budget(),
        estimator: window.estimator,
        reasoning_model: false,
    };
    let span = compact::plan(&rows, None, window.keep()).unwrap();
    // Each compaction stands for a later message than the one before (a repeat would be
    // ignored by the store, not written).
    let seq = AtomicI64::new(1_000_000);
    let label = format!("{}msgs", span.1 - span.0);
    c.bench_function(
        &format!("context_compaction_beyond_the_model_call_{label}"),
        |b| {
            b.iter(|| {
                let mut rows = rows.clone();
                rows[span.1 - 1].seq = seq.fetch_add(1, Ordering::Relaxed);
                rt.block_on(compact::compact(
                    &store,
                    &session.id,
                    &rows,
                    None,
                    span,
                    &who,
                    None,
                ))
                .unwrap()
            })
        },
    );
}

criterion_group!(benches, fitting, compaction);
criterion_main!(benches);
