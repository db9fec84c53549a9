//! `GET /api/status`: what the daemon is doing right now, for `switchboard status`
//! (lanes, runs, outbox, channels, connections). A typed view: the store's rows and the
//! runtime's structures never leave `server` as they are.

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use super::error::ApiError;
use super::AppState;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    pub version: &'static str,
    pub pid: u32,
    pub uptime_seconds: u64,
    pub active_runs: usize,
    pub lanes: Vec<LaneView>,
    /// Outbox rows by state (`pending`, `sending`, `sent`, `failed`, …).
    pub outbox: std::collections::BTreeMap<String, i64>,
    pub channels: Vec<ChannelView>,
    pub webchat_connections: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneView {
    pub name: &'static str,
    pub active: usize,
    pub capacity: usize,
    pub queued: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelView {
    pub id: String,
    /// Registered with the runtime right now (a restarting adapter is not).
    pub running: bool,
    pub restarts: u64,
}

pub async fn status(State(state): State<AppState>) -> Result<Json<StatusView>, ApiError> {
    let outbox = state.rt.store.outbox_counts().await?.into_iter().collect();
    let running: Vec<String> = state.rt.channels.lock().keys().cloned().collect();
    let restarts = state.adapters.restarts();
    let mut ids: Vec<String> = running
        .iter()
        .cloned()
        .chain(restarts.iter().map(|(c, _)| c.clone()))
        .collect();
    ids.sort();
    ids.dedup();
    let channels = ids
        .into_iter()
        .map(|id| ChannelView {
            running: running.contains(&id),
            restarts: restarts
                .iter()
                .find(|(c, _)| *c == id)
                .map_or(0, |(_, n)| *n),
            id,
        })
        .collect();
    Ok(Json(StatusView {
        version: env!("CARGO_PKG_VERSION"),
        pid: std::process::id(),
        uptime_seconds: state.started.elapsed().as_secs(),
        active_runs: state.rt.active_runs().len(),
        lanes: state
            .rt
            .lanes
            .iter()
            .map(|l| {
                let s = l.stats();
                LaneView {
                    name: s.name,
                    active: s.active,
                    capacity: s.cap,
                    queued: s.depth,
                }
            })
            .collect(),
        outbox,
        channels,
        webchat_connections: state.webchat.connections(),
    }))
}
