//! `/metrics`: Prometheus text exposition of lanes, outbox, connections and model calls.

use std::fmt::Write;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use super::AppState;
use crate::queue::LaneStats;

/// A per-lane series: name, Prometheus type, and how to read it from the stats.
type LaneSeries = (&'static str, &'static str, fn(&LaneStats) -> f64);

pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let mut out = String::with_capacity(2048);
    let lanes: Vec<_> = state.rt.lanes.iter().map(|l| l.stats()).collect();
    let gauges: [LaneSeries; 6] = [
        ("switchboard_lane_queue_depth", "gauge", |s| s.depth as f64),
        ("switchboard_lane_active", "gauge", |s| s.active as f64),
        ("switchboard_lane_capacity", "gauge", |s| s.cap as f64),
        ("switchboard_lane_started_total", "counter", |s| {
            s.started_total as f64
        }),
        ("switchboard_lane_completed_total", "counter", |s| {
            s.completed_total as f64
        }),
        ("switchboard_lane_wait_seconds_total", "counter", |s| {
            s.wait_seconds_total
        }),
    ];
    for (name, kind, f) in gauges {
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for s in &lanes {
            let _ = writeln!(out, "{name}{{lane=\"{}\"}} {}", s.name, f(s));
        }
    }
    let _ = writeln!(out, "# TYPE switchboard_lane_max_wait_seconds gauge");
    for s in &lanes {
        let _ = writeln!(
            out,
            "switchboard_lane_max_wait_seconds{{lane=\"{}\"}} {}",
            s.name,
            s.max_wait.as_secs_f64()
        );
    }
    let _ = writeln!(out, "# TYPE switchboard_outbox_messages gauge");
    if let Ok(counts) = state.rt.store.outbox_counts().await {
        for (st, n) in counts {
            let _ = writeln!(out, "switchboard_outbox_messages{{state=\"{st}\"}} {n}");
        }
    }
    let _ = writeln!(
        out,
        "# TYPE switchboard_channel_poisoned_updates_total counter"
    );
    if let Ok(counts) = state.rt.store.poisoned_counts().await {
        let mut counts: std::collections::BTreeMap<String, i64> = counts.into_iter().collect();
        counts.entry("telegram".to_string()).or_insert(0);
        for (channel, n) in counts {
            let _ = writeln!(
                out,
                "switchboard_channel_poisoned_updates_total{{channel=\"{channel}\"}} {n}"
            );
        }
    }
    let _ = writeln!(out, "# TYPE switchboard_active_runs gauge");
    let _ = writeln!(out, "switchboard_active_runs {}", state.rt.runs.all().len());
    let _ = writeln!(out, "# TYPE switchboard_webchat_connections gauge");
    let _ = writeln!(
        out,
        "switchboard_webchat_connections {}",
        state.webchat.connections()
    );
    let _ = writeln!(out, "# TYPE switchboard_channel_restarts_total counter");
    for (channel, n) in state.adapters.restarts() {
        let _ = writeln!(
            out,
            "switchboard_channel_restarts_total{{channel=\"{channel}\"}} {n}"
        );
    }
    if let Ok(leases) = super::status::lease_views(&state).await {
        if !leases.is_empty() {
            let _ = writeln!(out, "# TYPE switchboard_lease_held gauge");
            for l in &leases {
                let held = u8::from(l.mine && l.expires_at > crate::store::now_ms());
                let _ = writeln!(out, "switchboard_lease_held{{name=\"{}\"}} {held}", l.name);
            }
            let _ = writeln!(out, "# TYPE switchboard_lease_fence gauge");
            for l in &leases {
                let _ = writeln!(
                    out,
                    "switchboard_lease_fence{{name=\"{}\"}} {}",
                    l.name, l.fence
                );
            }
        }
    }
    let parts = &state.rt.parts;
    crate::mcp::metrics(&parts.get::<crate::mcp::McpHub>(), &mut out);
    parts
        .get::<crate::agent::usage::ModelMetrics>()
        .render(&mut out);
    parts.get::<crate::latency::Latency>().render(&mut out);
    crate::cluster::bus::metrics(crate::cluster::bus::of(&state.rt).as_ref(), &mut out);
    let _ = writeln!(out, "# TYPE switchboard_uptime_seconds gauge");
    let _ = writeln!(
        out,
        "switchboard_uptime_seconds {}",
        state.started.elapsed().as_secs_f64()
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
