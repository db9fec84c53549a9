//! `/status`, `/new`, `/stop`: commands about the chat's own session.

use std::sync::Arc;

use crate::agent::dispatch;
use crate::runtime::{CancelReason, Runtime};
use crate::store::StoreError;

pub async fn status(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
) -> Result<String, StoreError> {
    let cfg = rt.config();
    let choices = rt.store.session_choices(session_key).await?;
    let model = super::model::status_line(rt, &cfg, agent_id, &choices);
    let thinking = super::model::thinking_line(&choices);
    let lane = rt.lanes.get(dispatch::lane_for(session_key)).stats();
    let waiting = rt.store.inbox_len(session_key).await?;
    let running = match crate::cluster::running::of_session(rt, session_key).await? {
        Some(id) => format!("yes (run {})", short(&id)),
        None => "no".into(),
    };
    let session = rt.store.active_session(session_key).await?;
    let mcp: String = crate::mcp::status_lines(&rt.parts.get::<crate::mcp::McpHub>())
        .iter()
        .map(|l| format!("\nMCP {l}"))
        .collect();
    Ok(format!(
        "Session: {session_key}{}\nAgent: {agent_id}\nModel: {model}\nThinking: {thinking}\nRunning: {running}\nWaiting messages: {waiting}\n\
         Lane {}: {} active / {} max, {} queued\nQueue mode: {:?}",
        session.map(|s| format!(" ({})", short(&s.id))).unwrap_or_default(),
        lane.name,
        lane.active,
        lane.cap,
        lane.depth,
        cfg.messages.queue.mode,
    ) + &super::usage::status_lines(rt, session_key, agent_id).await?
        + &mcp)
}

pub async fn new_session(rt: &Arc<Runtime>, session_key: &str) -> Result<String, StoreError> {
    let mut local = None;
    if let Some(active) = rt.active_run(session_key) {
        active.cancel(CancelReason::User);
        local = Some(active.run_id);
    }
    // Runs and messages that waited for the old session end with it (and say so to
    // whoever waits for them); none comes back at the next start.
    let queued = rt
        .lanes
        .get(dispatch::lane_for(session_key))
        .remove_queued(session_key);
    dispatch::drop_waiting(rt, session_key, &queued, "dropped by /new").await?;
    // Shared mode: the session's runs on the other processes end too (none otherwise).
    crate::cluster::stop::reach_others(rt, session_key, local.as_deref()).await?;
    let archived = rt.store.archive_session(session_key).await?;
    Ok(match archived {
        Some(s) => format!(
            "Started a new session. The previous one ({}) is archived.",
            short(&s.id)
        ),
        None => "Started a new session.".into(),
    })
}

pub async fn stop(rt: &Arc<Runtime>, session_key: &str) -> Result<String, StoreError> {
    let mut stopped = 0;
    let mut local = None;
    if let Some(active) = rt.active_run(session_key) {
        active.cancel(CancelReason::User);
        stopped += 1;
        local = Some(active.run_id);
    }
    let queued = rt
        .lanes
        .get(dispatch::lane_for(session_key))
        .remove_queued(session_key);
    let dropped_msgs = dispatch::drop_waiting(rt, session_key, &queued, "stopped by /stop")
        .await?
        .len();
    // Shared mode: the session's runs on the other processes (none otherwise).
    stopped += crate::cluster::stop::reach_others(rt, session_key, local.as_deref()).await?;
    let children = crate::subagents::control::stop_children_of(
        rt,
        session_key,
        "stopped by /stop in the requester chat",
    )
    .await?;
    if stopped == 0 && dropped_msgs == 0 && children == 0 {
        return Ok("Nothing to stop.".to_string());
    }
    let mut parts = vec![format!(
        "{stopped} run{}",
        if stopped == 1 { "" } else { "s" }
    )];
    if children > 0 {
        parts.push(format!(
            "{children} sub-agent{}",
            if children == 1 { "" } else { "s" }
        ));
    }
    let mut out = format!("Stopped {}.", parts.join(" and "));
    if dropped_msgs > 0 {
        out.push_str(&format!(
            " Dropped {dropped_msgs} waiting message{}.",
            if dropped_msgs == 1 { "" } else { "s" }
        ));
    }
    Ok(out)
}

pub use crate::text::short;
