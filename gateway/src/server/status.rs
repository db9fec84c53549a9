//! `GET /api/status`: what the daemon is doing right now, for `switchboard status`
//! (lanes, runs, outbox, channels, connections). A typed view: the store's rows and the
//! runtime's structures never leave `server` as they are.

use axum::extract::State;
use serde::Serialize;

use super::error::{ApiError, Json};
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
    /// How the processes on this database divide the work: `standby` (one acts, the
    /// default, and SQLite) or `shared` (every process acts; channels and cron held under
    /// leases).
    pub processes: &'static str,
    /// This process's lease owner id (PostgreSQL; absent on SQLite, which takes no lease).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_owner: Option<String>,
    /// The database's leases and their holders (empty on SQLite); the lapsed leases of
    /// processes that have gone are left out.
    pub leases: Vec<LeaseView>,
}

/// A lease as the database holds it (times in unix ms, the database's clock).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaseView {
    pub name: String,
    pub owner: String,
    pub fence: i64,
    /// When its holder took it.
    pub since: i64,
    pub expires_at: i64,
    /// Held by this process.
    pub mine: bool,
}

/// The leases the store holds, each marked when it is `owner`'s.
pub(super) async fn lease_views(
    state: &AppState,
) -> Result<Vec<LeaseView>, crate::store::StoreError> {
    let Some(owner) = state.lease_owner.as_deref() else {
        return Ok(Vec::new());
    };
    let now = crate::store::now_ms();
    Ok(state
        .rt
        .store
        .leases()
        .await?
        .into_iter()
        // Each process start leaves a `process:<owner>` row behind: only live ones count.
        .filter(|l| !l.name.starts_with("process:") || l.expires_at >= now || l.owner == owner)
        .map(|l| LeaseView {
            mine: l.owner == owner,
            name: l.name,
            owner: l.owner,
            fence: l.fence,
            since: l.acquired_at,
            expires_at: l.expires_at,
        })
        .collect())
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
    /// Registered with the runtime right now (a restarting adapter is not): it sends.
    pub running: bool,
    /// Its inbound side (polling, the gateway session) runs in this process: always when
    /// running, except in shared mode, where only the holder of `channel:<id>` runs it.
    pub inbound: bool,
    pub restarts: u64,
}

pub async fn status(State(state): State<AppState>) -> Result<Json<StatusView>, ApiError> {
    let outbox = state.rt.store.outbox_counts().await?.into_iter().collect();
    let leases = lease_views(&state).await?;
    let now = crate::store::now_ms();
    let holds = |id: &str| {
        // The web chat is not leased: every process serves its own sockets.
        state.rt.home.member.is_none()
            || id == switchboard_channels::webchat::CHANNEL_ID
            || leases.iter().any(|l| {
                l.mine && l.expires_at >= now && l.name == crate::cluster::hold::channel_lease(id)
            })
    };
    let running: Vec<String> = state.rt.channels.ids();
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
            inbound: running.contains(&id) && holds(&id),
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
        active_runs: state.rt.runs.all().len(),
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
        processes: if state.rt.home.member.is_some() {
            "shared"
        } else {
            "standby"
        },
        lease_owner: state.lease_owner.as_deref().map(str::to_owned),
        leases,
    }))
}
