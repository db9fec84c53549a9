//! An MCP tool call over stdio against the test kit's server (`echo`, which does no work
//! of its own): the whole round trip through the gateway's tool dispatch, rmcp's client,
//! the child's pipes and the server. Target: ≤ 1 ms.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use switchboard::agent::tools::{dispatch, ToolContext};
use switchboard::config::Config;
use switchboard::mcp::{HubContext, State};
use switchboard::runtime::{EnvKeys, Runtime};
use switchboard::store::{Store, ToolCallRecord};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

fn mcp(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = switchboard_testkit::mcp_server::binary().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    let cfg: Config = switchboard::config::parse_config(
        &json!({"mcp": {"servers": {"kit": {"command": server}}}}).to_string(),
        &|_| None,
    )
    .unwrap();
    let tasks = TaskTracker::new();
    let cancel = CancellationToken::new();
    let runtime = rt.block_on(async {
        let store = Store::open_in_memory().await.unwrap();
        let (_tx, cfg_rx) = tokio::sync::watch::channel(Arc::new(cfg.clone()));
        let runtime = Runtime::new(
            store,
            cfg_rx,
            EnvKeys::default(),
            switchboard::runtime::Home::new(dir.path().to_path_buf(), None),
            CancellationToken::new(),
            switchboard::app::parts(),
        );
        let hub = runtime.parts.get::<switchboard::mcp::McpHub>();
        hub.start(
            HubContext {
                tasks: tasks.clone(),
                cancel: cancel.clone(),
                state_dir: dir.path().to_path_buf(),
                keys: EnvKeys::default(),
                host_env: Arc::new(|k: &str| std::env::var(k).ok()),
            },
            &cfg,
        );
        let started = Instant::now();
        while hub.status().0.first().map(|s| s.state) != Some(State::Ready) {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the server never got ready"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        runtime
    });
    let set = runtime
        .parts
        .get::<switchboard::agent::tools::ToolRegistry>()
        .for_run(&cfg, None, false);
    let ctx = ToolContext {
        rt: &runtime,
        cfg: &cfg,
        agent: None,
        workspace: &workspace,
        session_key: "agent:main:main",
        agent_id: "main",
        run_id: "run",
        call_id: "call_1",
        is_subagent: false,
        cancel: CancellationToken::new(),
        origin: None,
    };
    let echo = ToolCallRecord {
        id: "call_1".into(),
        name: "mcp__kit__echo".into(),
        arguments: r#"{"text": "hello"}"#.into(),
    };
    c.bench_function("mcp_stdio_echo_call", |b| {
        b.iter(|| {
            let out = rt.block_on(dispatch(&set, &echo, &ctx)).unwrap();
            assert_eq!(out, "hello");
        })
    });
    cancel.cancel();
    tasks.close();
    rt.block_on(tasks.wait());
    runtime.tasks.shutdown.cancel();
}

criterion_group!(benches, mcp);
criterion_main!(benches);
