//! Sustained turns per second: many client tasks, each its own session, each sending one turn
//! after another through the HTTP API for a fixed time after a warm-up. `throughput` drives
//! one daemon; `throughput-shared` (`--postgres` only) two daemons in shared mode on one
//! database, the clients split between them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use tokio::task::JoinSet;

use super::turn_latency::TURNS_PER_SESSION;
use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, procfs, Api, Settings};
use crate::stats::Percentiles;

const NAME: &str = "throughput";
/// The two-process scenario.
pub const SHARED: &str = "throughput-shared";
const TARGET_TURNS_PER_SECOND: f64 = 3000.0;
/// Warm-up before the measured window.
const WARMUP: Duration = Duration::from_secs(2);
/// The `main` lane cap: at least one slot per client.
const MAIN_CAP: u32 = 64;

/// Counters shared by the client tasks.
#[derive(Default)]
struct Shared {
    done: AtomicU64,
    errors: AtomicU64,
    stop: AtomicBool,
    /// Set while the measured window is open: latencies are kept only then.
    measuring: AtomicBool,
}

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let model = FakeModel::start_unchecked().await?;
    let main_cap = MAIN_CAP.max(settings.clients as u32);
    let gw = rig::start_gateway(settings, &model, main_cap, 8).await?;
    drive(settings, report, NAME, &[gw], &model, main_cap).await
}

/// Two daemons in shared mode (`storage.processes: "shared"`) on one PostgreSQL database.
pub async fn run_shared(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    if settings.postgres.is_none() {
        bail!("the {SHARED} scenario needs --postgres (one database, two processes)");
    }
    let model = FakeModel::start_unchecked().await?;
    let main_cap = MAIN_CAP.max(settings.clients as u32);
    let url = rig::storage_url(settings)
        .await?
        .context("a database for the two daemons")?;
    let mut gws = Vec::new();
    for _ in 0..2 {
        let gw = rig::start_gateway_shared(settings, &model, main_cap, &url).await?;
        gws.push(gw);
    }
    drive(settings, report, SHARED, &gws, &model, main_cap).await
}

/// The clients' load on `gws` (client `i` on daemon `i % gws.len()`), measured; the CPU,
/// context switches and memory figures are the daemons' together.
async fn drive(
    settings: &Settings,
    report: &mut ScenarioReport,
    name: &'static str,
    gws: &[switchboard_testkit::harness::Gateway],
    model: &FakeModel,
    main_cap: u32,
) -> anyhow::Result<()> {
    let mut pids = Vec::new();
    let mut apis = Vec::new();
    for gw in gws {
        pids.push(gw.pid().ok_or_else(|| anyhow!("the gateway has no pid"))?);
        apis.push(Api::of(gw)?);
    }
    let shared = Arc::new(Shared::default());

    let mut clients = JoinSet::new();
    for client in 0..settings.clients {
        let api = apis[client % apis.len()].clone();
        let shared = Arc::clone(&shared);
        clients.spawn(async move {
            let mut latencies = Vec::new();
            let mut first_error = None;
            let mut i = 0usize;
            while !shared.stop.load(Ordering::Relaxed) {
                let key = format!("agent:main:bench:tp:{client}:{}", i / TURNS_PER_SESSION);
                let started = Instant::now();
                match api.turn(&key, &format!("tp {client} {i}")).await {
                    Ok(_) => {
                        shared.done.fetch_add(1, Ordering::Relaxed);
                        if shared.measuring.load(Ordering::Relaxed) {
                            latencies.push(started.elapsed());
                        }
                    }
                    Err(error) => {
                        shared.errors.fetch_add(1, Ordering::Relaxed);
                        first_error.get_or_insert_with(|| format!("{error:#}"));
                    }
                }
                i += 1;
            }
            (latencies, first_error)
        });
    }

    eprintln!(
        "  [{name}] {} clients on {} daemon(s); warm-up {:?}",
        settings.clients,
        gws.len(),
        WARMUP
    );
    tokio::time::sleep(WARMUP).await;
    let (done_before, errors_before) = (
        shared.done.load(Ordering::Relaxed),
        shared.errors.load(Ordering::Relaxed),
    );
    let stat_before = daemons_stat(&pids)?;
    let switches_before = daemons_switches(&pids)?;
    let bench_cpu_before = procfs::cpu_seconds(None)?;
    let opened = Instant::now();
    shared.measuring.store(true, Ordering::Relaxed);
    eprintln!("  [{name}] measuring for {:?}", settings.duration);
    tokio::time::sleep(settings.duration).await;
    shared.measuring.store(false, Ordering::Relaxed);
    let window = opened.elapsed();
    let done = shared.done.load(Ordering::Relaxed) - done_before;
    let errors = shared.errors.load(Ordering::Relaxed) - errors_before;
    let stat = daemons_stat(&pids)? - stat_before;
    let cpu = stat.user + stat.system;
    let switches = daemons_switches(&pids)?.saturating_sub(switches_before);
    let bench_cpu = procfs::cpu_seconds(None)? - bench_cpu_before;
    let mut rss = 0;
    for pid in &pids {
        rss += procfs::rss(*pid)?;
    }
    shared.stop.store(true, Ordering::Relaxed);

    let mut latencies = Vec::new();
    let mut first_errors = Vec::new();
    // Each client finishes the turn it is in; bounded by the HTTP client's timeout.
    while let Some(joined) = clients.join_next().await {
        let (mut l, e) = joined?;
        latencies.append(&mut l);
        first_errors.extend(e);
    }
    let per_second = done as f64 / window.as_secs_f64();
    let latency = Percentiles::of(&latencies);

    let turns = format!("turns/s ({} sessions)", settings.clients);
    report.figures.push(if name == NAME {
        Figure::with_target(
            name,
            turns,
            per_second,
            "turns/s",
            Target::AtLeast(TARGET_TURNS_PER_SECOND),
        )
    } else {
        Figure::info(name, turns, per_second, "turns/s")
    });
    report.figures.push(Figure::info(
        name,
        "failed turns in window",
        errors as f64,
        "",
    ));
    if let Some(latency) = &latency {
        report.figures.push(Figure::info(
            name,
            "turn latency under load p50",
            latency.p50,
            "ms",
        ));
        report.figures.push(Figure::info(
            name,
            "turn latency under load p99",
            latency.p99,
            "ms",
        ));
    }
    report.figures.push(Figure::info(
        name,
        "daemon CPU per turn",
        cpu * 1e3 / done.max(1) as f64,
        "ms",
    ));
    report.figures.push(Figure::info(
        name,
        "daemon CPU per turn in the kernel",
        stat.system * 1e3 / done.max(1) as f64,
        "ms",
    ));
    report.figures.push(Figure::info(
        name,
        "daemon page faults per turn",
        stat.minor_faults as f64 / done.max(1) as f64,
        "",
    ));
    report.figures.push(Figure::info(
        name,
        "CPU used by the daemon",
        cpu / window.as_secs_f64() * 100.0,
        "% of 1 core",
    ));
    report.figures.push(Figure::info(
        name,
        "CPU used by bench + fake model",
        bench_cpu / window.as_secs_f64() * 100.0,
        "% of 1 core",
    ));
    report.figures.push(Figure::info(
        name,
        "daemon context switches per turn",
        switches as f64 / done.max(1) as f64,
        "",
    ));
    report.figures.push(Figure::info(
        name,
        "most model requests in flight (whole run)",
        model.max_in_flight() as f64,
        "",
    ));
    report.method = format!(
        "{} daemon(s){}; {} client tasks, each with its own session key (a new key every {TURNS_PER_SESSION} turns), each posting \
         turns back to back via POST /api/sessions/{{key}}/messages (wait:true); main lane cap {main_cap}; \
         {:?} warm-up, then turns completed in a {:?} window; the fake model and the bench run on the same \
         machine and take CPU from the daemon",
        gws.len(),
        if gws.len() > 1 {
            " in shared mode on one PostgreSQL database, the clients split between them; CPU, context switches and memory are the daemons' together"
        } else {
            ""
        },
        settings.clients,
        WARMUP,
        settings.duration
    );
    if errors > 0 {
        report.notes.push(format!(
            "{errors} turns failed in the window; first errors: {first_errors:?}"
        ));
    }
    for gw in gws {
        report
            .notes
            .extend(rig::gateway_notes(gw, settings, name, 10));
    }
    report.details = json!({
        "turns": done, "errors": errors, "windowSeconds": window.as_secs_f64(), "turnsPerSecond": per_second,
        "latencyMs": latency, "daemonCpuSeconds": cpu, "daemonSystemCpuSeconds": stat.system, "daemonPageFaults": stat.minor_faults, "daemonContextSwitches": switches, "benchCpuSeconds": bench_cpu, "rssBytesAfter": rss,
        "modelRequests": model.request_count(), "modelMaxInFlight": model.max_in_flight(),
    });
    Ok(())
}

/// The daemons' CPU seconds and page faults together.
fn daemons_stat(pids: &[u32]) -> anyhow::Result<procfs::Stat> {
    let mut total = procfs::Stat::default();
    for pid in pids {
        total = total + procfs::stat(Some(*pid))?;
    }
    Ok(total)
}

/// The daemons' context switches together.
fn daemons_switches(pids: &[u32]) -> anyhow::Result<u64> {
    let mut total = 0;
    for pid in pids {
        total += procfs::context_switches(*pid)?;
    }
    Ok(total)
}
