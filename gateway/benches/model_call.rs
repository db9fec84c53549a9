//! What the tool set a run is offered costs the gateway on each model call: a streamed call
//! of the OpenAI-compatible client to a server on 127.0.0.1 that reads the body whole and
//! answers a fixed stream without parsing anything, with a 20-message conversation and
//! (a) the five session tools, (b) every built-in tool (the default `tools.profile:
//! "full"`); and the per-run work of choosing the tool set and finding its specs.
//! The difference between (a) and (b) is the gateway's share of offering more tools: the
//! rest of a turn is the same.
#![allow(clippy::unwrap_used)]

use axum::body::Bytes;
use axum::response::IntoResponse;
use axum::routing::post;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use switchboard::agent::provider::{ChatMessage, ModelRequest, OpenAiProvider, Provider};
use switchboard::agent::tools::ToolRegistry;
use switchboard::config::Config;
use switchboard::store::Role;

/// The answer: one text delta, the usage, the end.
const STREAM: &str = concat!(
    "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"done\"},\"finish_reason\":null}]}\n\n",
    "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":900,\"completion_tokens\":1}}\n\n",
    "data: [DONE]\n\n",
);

async fn answer(body: Bytes) -> impl IntoResponse {
    assert!(!body.is_empty());
    ([("content-type", "text/event-stream")], STREAM)
}

fn config(v: serde_json::Value) -> Config {
    switchboard::config::parse_config(&v.to_string(), &|_| None).unwrap()
}

/// A conversation of `n` messages, user and assistant in turn.
fn conversation(n: usize) -> Vec<ChatMessage> {
    (0..n)
        .map(|i| ChatMessage {
            role: if i % 2 == 0 {
                Role::User
            } else {
                Role::Assistant
            },
            content: format!(
                "message {i}: a sentence or two of what a chat turn says, about this long."
            ),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            images: Vec::new(),
        })
        .collect()
}

fn model_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let url = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/v1/chat/completions", post(answer));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/v1")
    });
    let provider = OpenAiProvider::new(
        reqwest::Client::new(),
        url,
        Some("k".into()),
        Default::default(),
    );
    let registry = ToolRegistry::builtin();
    let all = config(json!({}));
    let sessions = config(json!({"tools": {"allow": [
        "agents_list", "sessions_history", "sessions_list", "sessions_send", "sessions_spawn"
    ]}}));

    let mut group = c.benchmark_group("tool_set_per_run");
    for (name, cfg) in [("session_tools", &sessions), ("all_tools", &all)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let tools = registry.for_run(cfg, None, false);
                registry.specs(&tools)
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("model_call");
    for (name, cfg) in [("session_tools", &sessions), ("all_tools", &all)] {
        let tools = registry.specs(&registry.for_run(cfg, None, false));
        let req = ModelRequest {
            model: "m".into(),
            system: "You are a helpful assistant in a chat.".into(),
            messages: conversation(20),
            tools,
            max_tokens: 4096,
            thinking: None,
            reasoning: Vec::new(),
            reasoning_model: false,
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                let resp = rt.block_on(provider.complete(&req)).unwrap();
                assert_eq!(resp.text, "done");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, model_call);
criterion_main!(benches);
