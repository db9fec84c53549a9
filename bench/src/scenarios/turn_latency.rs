//! Warm turn latency through the HTTP API, one turn at a time over a kept-alive connection,
//! and the daemon's overhead: turn latency minus the model's own time.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _};
use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, procfs, Api, Settings};
use crate::stats::Percentiles;

const NAME: &str = "turn-latency";
/// Targets for the overhead, in ms.
const TARGET_P50_MS: f64 = 0.5;
const TARGET_P99_MS: f64 = 2.0;
/// Turns per session before the next key: keeps histories short and alike (a chat turn, not
/// a 1,000-turn transcript), while most turns still hit an existing session.
pub const TURNS_PER_SESSION: usize = 10;

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let model = FakeModel::start_unchecked().await?;
    let gw = rig::start_gateway(settings, &model, 64, 8).await?;
    let pid = gw.pid().ok_or_else(|| anyhow!("the gateway has no pid"))?;
    let api = Api::of(&gw)?;

    eprintln!("  [turn-latency] warm-up: {} turns", settings.warmup);
    for i in 0..settings.warmup {
        one_turn(&api, "warm", i).await?;
    }
    let recorded_before = model.request_count();
    let cpu_before = procfs::cpu_seconds(Some(pid))?;
    let switches_before = procfs::context_switches(pid)?;
    eprintln!("  [turn-latency] measuring {} turns", settings.samples);
    let mut latencies = Vec::with_capacity(settings.samples);
    let measured_from = Instant::now();
    for i in 0..settings.samples {
        latencies.push(one_turn(&api, "turn", i).await?);
    }
    let measured_for = measured_from.elapsed();
    let cpu_used = procfs::cpu_seconds(Some(pid))? - cpu_before;
    let switches = procfs::context_switches(pid)?.saturating_sub(switches_before);

    // The model's time: the very requests the daemon sent during the measured turns, replayed
    // straight from the bench against the same fake model.
    let bodies: Vec<_> = model
        .requests()
        .into_iter()
        .skip(recorded_before)
        .map(|r| r.body)
        .collect();
    eprintln!(
        "  [turn-latency] model time: replaying {} of its requests",
        settings.samples
    );
    let model_times = rig::model_time(&model, &bodies, settings.samples).await?;

    let latency = Percentiles::of(&latencies).ok_or_else(|| anyhow!("no turns measured"))?;
    let model_p = Percentiles::of(&model_times).ok_or_else(|| anyhow!("no model samples"))?;
    let overhead = latency.minus(model_p.p50);
    let calls_per_turn = bodies.len() as f64 / settings.samples as f64;

    report
        .figures
        .extend(Figure::percentiles(NAME, "turn latency", &latency, None));
    report.figures.push(Figure::info(
        NAME,
        "model time p50 (direct)",
        model_p.p50,
        "ms",
    ));
    report.figures.push(Figure::with_target(
        NAME,
        "overhead p50",
        overhead.p50,
        "ms",
        Target::AtMost(TARGET_P50_MS),
    ));
    report
        .figures
        .push(Figure::info(NAME, "overhead p90", overhead.p90, "ms"));
    report.figures.push(Figure::with_target(
        NAME,
        "overhead p99",
        overhead.p99,
        "ms",
        Target::AtMost(TARGET_P99_MS),
    ));
    report.figures.push(Figure::info(
        NAME,
        "daemon CPU per turn",
        cpu_used * 1e3 / settings.samples as f64,
        "ms",
    ));
    report.figures.push(Figure::info(
        NAME,
        "daemon context switches per turn",
        switches as f64 / settings.samples as f64,
        "",
    ));
    report.method = format!(
        "{} warm-up turns, then {} sequential turns via POST /api/sessions/{{key}}/messages (wait:true) on one \
         kept-alive connection; each session key takes {TURNS_PER_SESSION} turns, then the next; overhead = turn \
         latency percentile minus the p50 of model time, where model time is measured by replaying the daemon's \
         own recorded requests from those turns straight to the same fake model ({} samples, full SSE answer read)",
        settings.warmup,
        settings.samples,
        model_p.n
    );
    report
        .notes
        .extend(rig::gateway_notes(&gw, settings, NAME, 10));
    report.details = json!({
        "latencyMs": latency, "modelTimeMs": model_p, "overheadMs": overhead,
        "modelCallsPerTurn": calls_per_turn, "daemonCpuSeconds": cpu_used, "daemonContextSwitches": switches,
        "measuredSeconds": measured_for.as_secs_f64(),
    });
    Ok(())
}

/// Turn `i` of a run called `label`; returns its latency.
async fn one_turn(api: &Api, label: &str, i: usize) -> anyhow::Result<Duration> {
    let key = format!("agent:main:bench:{label}:{}", i / TURNS_PER_SESSION);
    let started = Instant::now();
    api.turn(&key, &format!("{label} {i}"))
        .await
        .with_context(|| format!("{label} turn {i}"))?;
    Ok(started.elapsed())
}
