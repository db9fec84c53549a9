//! The scenarios of `switchboard-bench`, each a function that fills in a [`ScenarioReport`].

mod burst;
mod events;
mod exec_turn;
mod failover;
mod idle_rss;
mod sessions_rss;
mod shared_failover;
mod spawn_announce;
mod startup;
mod task_overhead;
mod throughput;
mod turn_latency;

use std::time::Instant;

use serde_json::Value;

use crate::report::ScenarioReport;
use crate::rig::{procfs, Settings};

/// Every scenario, in the order `all` runs them.
pub const ALL: &[&str] = &[
    "startup",
    "idle-rss",
    "turn-latency",
    "throughput",
    "spawn-announce",
    task_overhead::NAME,
    exec_turn::NAME,
    burst::NAME,
    sessions_rss::NAME,
];

/// Scenarios run only when named, not by `all`: they need `--postgres`.
pub const BY_NAME: &[&str] = &[failover::NAME, throughput::SHARED, shared_failover::NAME];

/// Runs scenario `name`, bounded by the scenario timeout (the burst gets it per run); a
/// failure or a timeout is recorded in the report, not returned.
pub async fn run(name: &'static str, settings: &Settings) -> ScenarioReport {
    let mut report = ScenarioReport {
        name,
        method: String::new(),
        notes: Vec::new(),
        details: Value::Null,
        error: None,
        seconds: 0.0,
        load_before: procfs::loadavg(),
        load_after: String::new(),
        figures: Vec::new(),
    };
    let started = Instant::now();
    let limit = match name {
        // Each burst run has its own deadline inside; this only catches a hang around them.
        burst::NAME => settings.scenario_timeout * (settings.burst_caps.len() as u32 + 1),
        _ => settings.scenario_timeout,
    };
    let outcome = tokio::time::timeout(limit, dispatch(name, settings, &mut report)).await;
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(error)) => report.error = Some(format!("{error:#}")),
        Err(_) => report.error = Some(format!("did not finish within {limit:?}")),
    }
    report.seconds = started.elapsed().as_secs_f64();
    report.load_after = procfs::loadavg();
    report
}

async fn dispatch(
    name: &str,
    settings: &Settings,
    report: &mut ScenarioReport,
) -> anyhow::Result<()> {
    match name {
        "startup" => startup::run(settings, report).await,
        "idle-rss" => idle_rss::run(settings, report).await,
        "turn-latency" => turn_latency::run(settings, report).await,
        "throughput" => throughput::run(settings, report).await,
        "spawn-announce" => spawn_announce::run(settings, report).await,
        task_overhead::NAME => task_overhead::run(settings, report).await,
        exec_turn::NAME => exec_turn::run(settings, report).await,
        burst::NAME => burst::run(settings, report).await,
        sessions_rss::NAME => sessions_rss::run(settings, report).await,
        failover::NAME => failover::run(settings, report).await,
        throughput::SHARED => throughput::run_shared(settings, report).await,
        shared_failover::NAME => shared_failover::run(settings, report).await,
        other => anyhow::bail!("unknown scenario {other}"),
    }
}
