//! `switchboard-bench`: runs the real release `switchboard` binary against an instant
//! scripted OpenAI-compatible model on 127.0.0.1, measures start time, idle memory, turn
//! overhead, throughput, spawn → announce and a sub-agent burst, prints a table (figure,
//! value, target, pass/miss) on stdout and writes a JSON copy. Progress goes to stderr.
//!
//! Only loopback traffic; every scenario is bounded in time and stops by itself.
#![forbid(unsafe_code)]

mod report;
mod rig;
mod scenarios;
mod stats;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context as _};
use clap::Parser;
use serde_json::json;

use crate::report::Report;
use crate::rig::Settings;

/// Benchmarks of the switchboard daemon (release binary, instant fake model, 127.0.0.1).
#[derive(Parser, Debug)]
#[command(name = "switchboard-bench")]
struct Cli {
    /// Scenarios to run: all, startup, idle-rss, turn-latency, throughput, spawn-announce,
    /// task-overhead, exec-turn, burst, sessions-rss; and, only when named, failover and
    /// shared-failover (with --postgres).
    #[arg(default_value = "all")]
    scenarios: Vec<String>,
    /// The switchboard binary (default: target/release/switchboard in the workspace).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// Where to write the JSON report.
    #[arg(long, default_value = "bench-results/report.json")]
    out: PathBuf,
    /// Measured samples of each latency figure (turns, spawns, model requests).
    #[arg(long, default_value_t = 1000)]
    samples: usize,
    /// Warm-up turns before turn latency is measured (a tenth of it, at least 10, for spawns).
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    /// Measured restarts of the startup scenario.
    #[arg(long, default_value_t = 30)]
    restarts: usize,
    /// Idle time before the idle RSS reading, in seconds.
    #[arg(long, default_value_t = 10)]
    idle_secs: u64,
    /// Concurrent client sessions of the throughput scenario.
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Measured window of the throughput scenario, in seconds.
    #[arg(long, default_value_t = 10)]
    duration_secs: u64,
    /// Sub-agents spawned in the burst.
    #[arg(long, default_value_t = 10_000)]
    burst: usize,
    /// Parent turns the burst is spread over (each spawns burst / parents children).
    #[arg(long, default_value_t = 100)]
    burst_parents: usize,
    /// Subagent lane caps, one burst each.
    #[arg(long, value_delimiter = ',', default_value = "8,256")]
    burst_caps: Vec<u32>,
    /// Bound of each scenario (of each burst run), in seconds.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// RUST_LOG of the daemons; anything chattier than `warn` costs the figures time (use it
    /// to look, e.g. `warn,sqlx::query=debug` to count statements).
    #[arg(long, default_value = "warn")]
    gateway_log: String,
    /// Keep each daemon's whole stderr as <DIR>/<scenario>.log.
    #[arg(long)]
    log_dir: Option<PathBuf>,
    /// Stdio MCP servers configured in every daemon (the test kit's `mcp-test-server`),
    /// to see what configured servers cost at start and at idle.
    #[arg(long, default_value_t = 0)]
    mcp_servers: usize,
    /// Run every daemon on PostgreSQL, each on a fresh database: on a throwaway cluster the
    /// bench starts (Debian's `postgresql`, installed by `tests/setup.sh`), or on the server
    /// `SWITCHBOARD_TEST_PG_URL` names.
    #[arg(long)]
    postgres: bool,
    /// A JSON object merged into every daemon's config (objects key by key, any other value
    /// replaced), e.g. '{"tools":{"allow":["group:sessions"]}}' to offer fewer tools.
    #[arg(long, value_parser = json_object)]
    config_merge: Option<serde_json::Value>,
}

/// `--config-merge`'s value: a JSON object.
fn json_object(text: &str) -> Result<serde_json::Value, String> {
    match serde_json::from_str(text) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        Ok(_) => Err("expected a JSON object".into()),
        Err(error) => Err(format!("not JSON: {error}")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(error) => {
            eprintln!("switchboard-bench: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the scenarios; `Ok(false)` when one of them could not finish (misses are not errors).
async fn run(cli: Cli) -> anyhow::Result<bool> {
    let names = scenario_names(&cli.scenarios)?;
    let bin = match cli.bin {
        Some(bin) => bin,
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/switchboard"),
    };
    if !bin.is_file() {
        bail!(
            "no switchboard binary at {}: build it with `cargo build --release -p switchboard-gateway` or pass --bin",
            bin.display()
        );
    }
    let bin = bin
        .canonicalize()
        .with_context(|| format!("resolving {}", bin.display()))?;
    if cli.samples < 1000 {
        eprintln!(
            "note: --samples {} is below the 1,000 the report is meant for",
            cli.samples
        );
    }
    let mcp_servers = match cli.mcp_servers {
        0 => Vec::new(),
        n => {
            let server = switchboard_testkit::mcp_server::binary()?;
            vec![server; n]
        }
    };
    let settings = Settings {
        bin: bin.clone(),
        mcp_servers,
        samples: cli.samples.max(1),
        warmup: cli.warmup,
        restarts: cli.restarts.max(1),
        idle: Duration::from_secs(cli.idle_secs),
        clients: cli.clients.max(1),
        duration: Duration::from_secs(cli.duration_secs.max(1)),
        burst: cli.burst.max(1),
        burst_parents: cli.burst_parents.max(1),
        burst_caps: cli.burst_caps.clone(),
        scenario_timeout: Duration::from_secs(cli.timeout_secs.max(1)),
        gateway_log: cli.gateway_log.clone(),
        log_dir: cli.log_dir.clone(),
        postgres: cli.postgres.then(Default::default),
        config_merge: cli.config_merge.clone(),
    };
    let mut report = Report {
        started_at: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        binary: bin.display().to_string(),
        cpus: std::thread::available_parallelism().map_or(0, usize::from),
        settings: json!({
            "scenarios": names, "samples": settings.samples, "warmup": settings.warmup,
            "restarts": settings.restarts, "idleSeconds": cli.idle_secs, "clients": settings.clients,
            "durationSeconds": cli.duration_secs, "burst": settings.burst, "burstParents": settings.burst_parents,
            "burstCaps": settings.burst_caps, "timeoutSeconds": cli.timeout_secs,
            "gatewayLog": settings.gateway_log, "mcpServers": cli.mcp_servers,
            "storage": if cli.postgres { "postgres" } else { "sqlite" },
            "configMerge": cli.config_merge,
        }),
        figures: Vec::new(),
        scenarios: Vec::new(),
    };
    let mut finished = true;
    for name in names {
        eprintln!("== {name} (load {})", rig::procfs::loadavg());
        let scenario = scenarios::run(name, &settings).await;
        if let Some(error) = &scenario.error {
            eprintln!("   {name} failed: {error}");
            finished = false;
        }
        report.add(scenario);
        // Keep a partial report if a later scenario hangs the machine.
        report.write_json(&cli.out)?;
    }
    println!("{}", report.render_table());
    report.write_json(&cli.out)?;
    eprintln!("report written to {}", cli.out.display());
    Ok(finished)
}

/// `all` or scenario names, deduplicated in the order given.
fn scenario_names(args: &[String]) -> anyhow::Result<Vec<&'static str>> {
    let mut names: Vec<&'static str> = Vec::new();
    for arg in args {
        let wanted: Vec<&'static str> = if arg == "all" {
            scenarios::ALL.to_vec()
        } else {
            match scenarios::ALL
                .iter()
                .chain(scenarios::BY_NAME)
                .find(|n| **n == arg.as_str())
            {
                Some(name) => vec![*name],
                None => bail!(
                    "unknown scenario `{arg}`; known: all, {}, {}",
                    scenarios::ALL.join(", "),
                    scenarios::BY_NAME.join(", ")
                ),
            }
        };
        for name in wanted {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    Ok(names)
}
