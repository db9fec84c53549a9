//! Tool calls: the dispatch overhead of an in-process tool (name lookup, argument JSON,
//! the call through the trait object; target ≤ 50 µs beyond the tool's own work), a small
//! `read`, and `exec` end to end (spawn in its own process group, wait, reap the group,
//! answer): `true` and `echo hi`, with the sandbox off (target ≤ 2 ms) and on (bubblewrap
//! with its own namespaces; target ≤ 5 ms).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use switchboard::agent::provider::ToolSpec;
use switchboard::agent::tools::{dispatch, Tool, ToolContext, ToolError};
use switchboard::config::Config;
use switchboard::runtime::{EnvKeys, Runtime};
use switchboard::store::{Store, ToolCallRecord};
use tokio_util::sync::CancellationToken;

/// A tool that does nothing: what is measured is the dispatch around it.
struct Nop;

#[async_trait]
impl Tool for Nop {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "nop".into(),
            description: "does nothing".into(),
            parameters: json!({"type": "object"}),
        }
    }

    async fn call(&self, _ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        Ok(args
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string())
    }
}

fn call(name: &str, arguments: &str) -> ToolCallRecord {
    ToolCallRecord {
        id: "call_1".into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn tools(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("small.txt"), "one\ntwo\nthree\n").unwrap();
    let cfg: Config = switchboard::config::parse_config(
        &json!({"tools": {"exec": {"security": "full"}}}).to_string(),
        &|_| None,
    )
    .unwrap();
    let exec_cfg = |mode: &str| -> Config {
        switchboard::config::parse_config(
            &json!({
                "tools": {"exec": {"security": "full"}},
                "agents": {"defaults": {"sandbox": {"mode": mode, "network": true}}},
            })
            .to_string(),
            &|_| None,
        )
        .unwrap()
    };
    let (cfg_off, cfg_on) = (exec_cfg("off"), exec_cfg("all"));
    let runtime = rt.block_on(async {
        let store = Store::open_in_memory().await.unwrap();
        let (_tx, cfg_rx) = tokio::sync::watch::channel(Arc::new(cfg.clone()));
        Runtime::new(
            store,
            cfg_rx,
            EnvKeys::default(),
            switchboard::runtime::Home::new(dir.path().to_path_buf(), None),
            CancellationToken::new(),
            switchboard::app::parts(),
        )
    });
    let mut set: BTreeMap<String, Arc<dyn Tool>> = runtime
        .parts
        .get::<switchboard::agent::tools::ToolRegistry>()
        .for_run(&cfg, None, false);
    set.insert("nop".into(), Arc::new(Nop));
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
    let nop = call(
        "nop",
        r#"{"path": "notes/today.md", "offset": 1, "limit": 200}"#,
    );
    c.bench_function("tool_dispatch_nop", |b| {
        b.iter(|| rt.block_on(dispatch(&set, &nop, &ctx)).unwrap())
    });
    let read = call("read", r#"{"path": "small.txt"}"#);
    c.bench_function("tool_read_small_file", |b| {
        b.iter(|| rt.block_on(dispatch(&set, &read, &ctx)).unwrap())
    });
    let mut group = c.benchmark_group("exec");
    group.sample_size(50);
    for (name, line) in [("true", "true"), ("echo_hi", "echo hi")] {
        let exec = call("exec", &json!({ "command": line }).to_string());
        for (mode, cfg) in [("sandbox_off", &cfg_off), ("sandbox_on", &cfg_on)] {
            if mode == "sandbox_on" && !bwrap_works() {
                eprintln!("bwrap cannot run here: exec/{name}/{mode} skipped");
                continue;
            }
            let set = runtime
                .parts
                .get::<switchboard::agent::tools::ToolRegistry>()
                .for_run(cfg, None, false);
            let ctx = ToolContext {
                rt: &runtime,
                cfg,
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
            group.bench_function(format!("tool_exec_{name}/{mode}"), |b| {
                b.iter(|| {
                    let out = rt.block_on(dispatch(&set, &exec, &ctx)).unwrap();
                    assert!(out.contains("\"exitCode\":0"), "{out}");
                })
            });
        }
    }
    group.finish();
    runtime.tasks.shutdown.cancel();
}

/// Whether bubblewrap can make its namespaces on this machine (it cannot in some
/// containers): the sandboxed cases are measured only where it can.
fn bwrap_works() -> bool {
    std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-pid", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

criterion_group!(benches, tools);
criterion_main!(benches);
