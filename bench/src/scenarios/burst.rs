//! A burst of sub-agents: parent turns whose one model answer holds many `sessions_spawn`
//! calls, with the `subagent` lane capped low and then high. Counts each child's announce
//! (every run id exactly once), the wall time to the last announce, and the daemon's peak
//! resident memory sampled from `/proc`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use futures::future::try_join_all;
use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::WsClient;

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, procfs, Api, Metrics, Settings};

pub const NAME: &str = "burst";
/// Target for the daemon's resident memory during the burst, in MB (10^6 bytes).
const TARGET_RSS_MB: f64 = 200.0;
/// RSS sampling period.
const RSS_PERIOD: Duration = Duration::from_millis(100);
/// Progress check period; `/metrics` is read every `METRICS_EVERY` checks.
const CHECK_PERIOD: Duration = Duration::from_millis(250);
const METRICS_EVERY: u32 = 4;
/// After the last announce, how long to keep listening for a duplicate.
const LINGER: Duration = Duration::from_secs(2);
/// The `main` lane cap: every parent turn of the burst can run at once up to this many.
const MAIN_CAP: u32 = 64;

/// What the event stream saw.
#[derive(Default)]
struct Tally {
    spawned: HashSet<String>,
    /// Deliveries of `announce:<runId>` per run id.
    announces: HashMap<String, u32>,
    last_announce: Option<Instant>,
    socket_error: Option<String>,
}

fn lock(tally: &Mutex<Tally>) -> std::sync::MutexGuard<'_, Tally> {
    tally.lock().unwrap_or_else(PoisonError::into_inner)
}

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let parents = settings.burst_parents.clamp(1, settings.burst.max(1));
    let per_parent = settings.burst.div_ceil(parents);
    let total = parents * per_parent;
    let mut details = serde_json::Map::new();
    for &cap in &settings.burst_caps {
        eprintln!("  [burst] cap {cap}: {parents} parent turns x {per_parent} spawns = {total} sub-agents");
        let outcome = one_burst(settings, cap, parents, per_parent, report).await?;
        details.insert(format!("cap{cap}"), outcome);
    }
    report.method = format!(
        "per run: a fresh daemon (main lane cap {MAIN_CAP}, subagent lane cap as named), {parents} parent turns \
         posted at once (wait:false), each answered by the fake model with {per_parent} sessions_spawn calls \
         ({total} sub-agents); children and announce steps get the instant echo reply; announces counted from \
         outbox.sent events of announce:<runId> on the event stream (/api/events), and audited at the end from \
         GET /api/subagents?requester=<parent> (announceState \"queued\" = its outbox row was written once, \
         the outbox key is unique) and /metrics; wall time from the first POST to the last announce event \
         (or to quiescence seen in /metrics when events were dropped); VmRSS sampled every {} ms",
        RSS_PERIOD.as_millis()
    );
    report.details = Value::Object(details);
    Ok(())
}

/// One burst at subagent cap `cap`; pushes its figures, returns its details.
async fn one_burst(
    settings: &Settings,
    cap: u32,
    parents: usize,
    per_parent: usize,
    report: &mut ScenarioReport,
) -> anyhow::Result<Value> {
    let total = parents * per_parent;
    let model = FakeModel::start_unchecked().await?;
    let mut gw = rig::start_gateway(settings, &model, MAIN_CAP, cap).await?;
    let pid = gw.pid().ok_or_else(|| anyhow!("the gateway has no pid"))?;
    let api = Api::of(&gw)?;
    let rss_at_start = procfs::rss(pid)?;

    for p in 0..parents {
        let trigger = format!("[burst-{p}]");
        let calls = (0..per_parent)
            .map(|k| {
                ToolCall::new(
                    "sessions_spawn",
                    format!("{{\"task\":\"burst child {p}.{k}\"}}"),
                )
            })
            .collect();
        model.push_for(&trigger, Step::ToolCalls(calls));
        model.push_for(&trigger, Step::Text("ok".into()));
    }

    // Listener on the operators' event stream (every session's events); it only counts.
    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut ws = WsClient::connect(&gw.events_url()).await?;
    let listener = {
        let (tally, stop) = (Arc::clone(&tally), Arc::clone(&stop));
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                // `next_frame` only awaits the socket's stream, so dropping it on the timeout
                // loses nothing.
                let frame = match tokio::time::timeout(
                    CHECK_PERIOD,
                    ws.next_frame(Duration::from_secs(3600)),
                )
                .await
                {
                    Err(_) => continue,
                    Ok(Ok(frame)) => frame,
                    Ok(Err(error)) => {
                        lock(&tally).socket_error = Some(format!("{error:#}"));
                        return;
                    }
                };
                let event = &frame["event"];
                match event["type"].as_str() {
                    Some("subagent.spawned") => {
                        if let Some(id) = event["runId"].as_str() {
                            lock(&tally).spawned.insert(id.to_owned());
                        }
                    }
                    Some("outbox.sent") => {
                        if let Some(id) = event["key"]
                            .as_str()
                            .and_then(|k| k.strip_prefix("announce:"))
                        {
                            let mut t = lock(&tally);
                            *t.announces.entry(id.to_owned()).or_default() += 1;
                            t.last_announce = Some(Instant::now());
                        }
                    }
                    _ => {}
                }
            }
        })
    };
    // Sampler: the daemon's resident memory every RSS_PERIOD.
    let peak_rss = Arc::new(AtomicU64::new(rss_at_start));
    let sampler = {
        let (peak, stop) = (Arc::clone(&peak_rss), Arc::clone(&stop));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(RSS_PERIOD);
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                match procfs::rss(pid) {
                    Ok(rss) => {
                        peak.fetch_max(rss, Ordering::Relaxed);
                    }
                    Err(_) => return, // the process is gone
                }
            }
        })
    };

    let started = Instant::now();
    let deadline = started + settings.scenario_timeout;
    try_join_all((0..parents).map(|p| {
        let api = api.clone();
        async move {
            api.post(
                &format!("agent:main:bench:burst:{p}"),
                &format!("[burst-{p}] spawn {per_parent} children"),
                false,
            )
            .await
        }
    }))
    .await?;
    eprintln!(
        "  [burst] cap {cap}: {parents} parent turns posted in {:?}",
        started.elapsed()
    );

    // Wait for every announce on the socket, or for the daemon to go quiet (events dropped),
    // or for the deadline.
    let mut checks = 0u32;
    let mut last_sent = -1.0;
    let mut quiet_checks = 0;
    let (finished_at, how) = loop {
        tokio::time::sleep(CHECK_PERIOD).await;
        checks += 1;
        let (seen, last) = {
            let t = lock(&tally);
            (t.announces.len(), t.last_announce)
        };
        if seen >= total {
            break (
                last.unwrap_or_else(Instant::now),
                "all announce events seen",
            );
        }
        if Instant::now() > deadline {
            break (Instant::now(), "deadline passed");
        }
        if checks % METRICS_EVERY != 0 {
            continue;
        }
        let Ok(m) = api.metrics().await else { continue };
        let sent = m.get("switchboard_outbox_messages{state=\"sent\"}");
        eprintln!(
            "  [burst] cap {cap}: {:>5.1} s  subagent lane started {} completed {} active {} queued {}; outbox sent {sent}; announce events {seen}/{total}",
            started.elapsed().as_secs_f64(),
            m.get("switchboard_lane_started_total{lane=\"subagent\"}"),
            m.get("switchboard_lane_completed_total{lane=\"subagent\"}"),
            m.get("switchboard_lane_active{lane=\"subagent\"}"),
            m.get("switchboard_lane_queue_depth{lane=\"subagent\"}"),
        );
        if quiescent(&m, total) && sent == last_sent {
            quiet_checks += 1;
            if quiet_checks >= 2 {
                break (
                    last.unwrap_or_else(Instant::now),
                    "daemon quiet (some events were not seen)",
                );
            }
        } else {
            quiet_checks = 0;
        }
        last_sent = sent;
    };
    let timed_out = how == "deadline passed";
    // Listen a little longer for a duplicate delivery.
    tokio::time::sleep(LINGER).await;
    stop.store(true, Ordering::Relaxed);
    let _ = listener.await;
    let _ = sampler.await;
    let wall = finished_at.saturating_duration_since(started);
    let peak = peak_rss.load(Ordering::Relaxed);
    let hwm = procfs::hwm(pid)?;
    let metrics = api.metrics().await.ok();

    // Audit from the registry: each parent's children and their announce state.
    let mut rows = 0usize;
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    let mut registry_ids = HashSet::new();
    for p in 0..parents {
        for row in api
            .subagents_of(
                &format!("agent:main:bench:burst:{p}"),
                per_parent.max(1) * 2,
            )
            .await?
        {
            rows += 1;
            *states
                .entry(row["announceState"].as_str().unwrap_or("?").to_owned())
                .or_default() += 1;
            if let Some(id) = row["runId"].as_str() {
                registry_ids.insert(id.to_owned());
            }
        }
    }
    let (dup_events, unique_events, strangers, spawned_events, socket_error) = {
        let t = lock(&tally);
        (
            t.announces.values().filter(|&&n| n > 1).count(),
            t.announces.len(),
            t.announces
                .keys()
                .filter(|id| !registry_ids.contains(*id))
                .count(),
            t.spawned.len(),
            t.socket_error.clone(),
        )
    };
    let queued = states.get("queued").copied().unwrap_or(0);
    let missing = total.saturating_sub(queued);
    let all_once =
        !timed_out && rows == total && queued == total && dup_events == 0 && strangers == 0;

    let label = |what: &str| format!("cap {cap}: {what}");
    report.figures.push(Figure::check(
        NAME,
        label(&format!("{total} sub-agents, each announced exactly once")),
        all_once,
        format!("{queued}/{total} once, {dup_events} dup, {missing} missing"),
    ));
    report.figures.push(Figure::info(
        NAME,
        label("wall time, first POST -> last announce"),
        wall.as_secs_f64(),
        "s",
    ));
    report.figures.push(Figure::info(
        NAME,
        label("sub-agents announced per second"),
        queued as f64 / wall.as_secs_f64().max(1e-9),
        "/s",
    ));
    report.figures.push(Figure::with_target(
        NAME,
        label("peak VmRSS (sampled every 100 ms)"),
        procfs::megabytes(peak),
        "MB",
        Target::AtMost(TARGET_RSS_MB),
    ));
    report.figures.push(Figure::info(
        NAME,
        label("VmHWM (kernel's peak)"),
        procfs::megabytes(hwm),
        "MB",
    ));
    report.figures.push(Figure::info(
        NAME,
        label("announce events seen on /ws"),
        unique_events as f64,
        "",
    ));
    if timed_out {
        report.notes.push(format!(
            "cap {cap}: stopped at the {:?} deadline before every announce was seen",
            settings.scenario_timeout
        ));
    }
    if unique_events < total {
        report.notes.push(format!(
            "cap {cap}: the event stream saw {unique_events} of {total} announce deliveries (the daemon drops \
             live events for a socket whose queue is full); the registry audit counts {queued} queued"
        ));
    }
    if let Some(error) = &socket_error {
        report
            .notes
            .push(format!("cap {cap}: the event stream failed: {error}"));
    }
    for note in rig::gateway_notes(&gw, settings, &format!("{NAME}-cap{cap}"), 8) {
        report.notes.push(format!("cap {cap}: {note}"));
    }
    let outbox: BTreeMap<&str, f64> = ["pending", "sending", "sent", "failed"]
        .into_iter()
        .map(|s| {
            (
                s,
                metrics.as_ref().map_or(-1.0, |m| {
                    m.get(&format!("switchboard_outbox_messages{{state=\"{s}\"}}"))
                }),
            )
        })
        .collect();
    let details = json!({
        "subagents": total, "parents": parents, "perParent": per_parent, "ended": how,
        "wallSeconds": wall.as_secs_f64(), "registryRows": rows, "announceStates": states,
        "announceEventsUnique": unique_events, "announceEventsDuplicated": dup_events,
        "announceEventsUnknownRunId": strangers, "spawnedEvents": spawned_events,
        "peakRssBytes": peak, "hwmBytes": hwm, "rssAtStartBytes": rss_at_start, "outbox": outbox,
        "modelRequests": model.request_count(), "modelMaxInFlight": model.max_in_flight(),
    });
    let _ = gw.kill().await;
    Ok(details)
}

/// Nothing left to do in the daemon: every child ran, no lane is busy, nothing waits in the
/// outbox.
fn quiescent(m: &Metrics, total: usize) -> bool {
    m.get("switchboard_lane_completed_total{lane=\"subagent\"}") >= total as f64
        && m.get("switchboard_lane_active{lane=\"subagent\"}") == 0.0
        && m.get("switchboard_lane_queue_depth{lane=\"subagent\"}") == 0.0
        && m.get("switchboard_lane_active{lane=\"main\"}") == 0.0
        && m.get("switchboard_lane_queue_depth{lane=\"main\"}") == 0.0
        && m.get("switchboard_outbox_messages{state=\"pending\"}") == 0.0
        && m.get("switchboard_outbox_messages{state=\"sending\"}") == 0.0
        && m.get("switchboard_active_runs") == 0.0
}
