//! What waits in sessions: at start, the runs a stop or crash left unfinished and the
//! messages no run took; the messages a run leaves behind when it ends; and dropping what
//! waits when a session's work is stopped.

use std::collections::HashSet;
use std::sync::Arc;

use super::{enqueue_new_run, lane_for, schedule_row};
use crate::config::QueueMode;
use crate::events::{Event, RunEnded};
use crate::queue;
use crate::runtime::Runtime;
use crate::store::{Result, RunStatus};

/// At start: queue every run that was queued or running when the process stopped (a
/// running one resumes from its stored transcript), and a run for any session whose
/// inbox holds messages that no run took.
pub async fn recover(rt: &Arc<Runtime>) -> Result<usize> {
    let runs = rt.store.take_over_runs().await?;
    // Sessions with a run queued again: it claims what waits in them.
    let (mut n, scheduled) = resume(rt, &runs).await?;
    for waiting in rt.store.sessions_with_inbox().await? {
        let key = waiting.key;
        if scheduled.contains(&key) {
            continue;
        }
        if !waiting.active
            && crate::session_key::SessionKey::parse(&key).is_ok_and(|k| k.is_subagent())
        {
            // An archived child takes no more messages (`/subagents send` refuses it too).
            let dropped = rt.store.clear_inbox(&key).await?;
            tracing::warn!(session = %key, dropped, "dropping messages left for an archived sub-agent session");
            continue;
        }
        let Some(agent_id) = waiting.agent_id.or_else(|| agent_of_key(&key)) else {
            tracing::warn!(session = %key, "messages wait for a session key without an agent; left as they are");
            continue;
        };
        let session = rt.store.ensure_session(&key, &agent_id, None).await?;
        let origin = session.origin.clone();
        enqueue_new_run(rt, &key, &agent_id, &session.id, true, origin.as_ref()).await?;
        n += 1;
    }
    Ok(n)
}

/// Shared mode, every renewal period: take over the runs of processes that died (their
/// leases expired) and queue them here, a running one to resume from its transcript.
pub async fn take_over(rt: &Arc<Runtime>) -> Result<usize> {
    let runs = rt.store.take_over_runs().await?;
    Ok(resume(rt, &runs).await?.0)
}

/// Queue `runs` (unfinished, this process's to run) on their lanes; returns how many and
/// their sessions.
async fn resume(
    rt: &Arc<Runtime>,
    runs: &[crate::store::RunRow],
) -> Result<(usize, HashSet<String>)> {
    let mut scheduled = HashSet::new();
    let mut n = 0;
    let interrupt =
        rt.config().agents.defaults.subagents.on_restart == crate::config::OnRestart::Interrupt;
    for run in runs {
        if interrupt
            && run.lane == queue::SUBAGENT
            && run.status == crate::store::RunStatus::Running
        {
            tracing::info!(run_id = %run.id, "sub-agent run was mid-flight; ending it as interrupted (subagents.onRestart)");
            let end = crate::store::RunEnd {
                steps: run.steps,
                input_tokens: run.input_tokens,
                output_tokens: run.output_tokens,
                cost_usd: run.cost_usd,
                archive_after_ms: rt.config().agents.defaults.subagents.archive_after_ms(),
                ..crate::store::RunEnd::bare(
                    crate::store::RunStatus::Interrupted,
                    Some("interrupted by a gateway restart".into()),
                )
            };
            rt.store.finish_run(&run.id, &end).await?;
            continue;
        }
        tracing::info!(run_id = %run.id, session = %run.session_key, status = ?run.status, "recovering run");
        scheduled.insert(run.session_key.clone());
        schedule_row(rt, run.clone());
        n += 1;
    }
    Ok((n, scheduled))
}

/// Drop what waits in a session (`/stop`, `/new`, stopping a child): `runs`, just taken
/// off its lane before they started, end `cancelled` with `why`, and its waiting messages
/// are deleted, in one transaction. Whoever waits for one of those messages (`wait: true`,
/// `/subagents send`) hears at once: a `run.ended` event of status `cancelled` names them
/// as claimed. Returns the inbox ids dropped.
pub async fn drop_waiting(
    rt: &Arc<Runtime>,
    session_key: &str,
    runs: &[String],
    why: &str,
) -> Result<Vec<i64>> {
    let dropped = rt.store.drop_waiting(session_key, runs, why).await?;
    let ended = |run_id: Option<&String>| RunEnded {
        session_key: session_key.to_string(),
        run_id: run_id.cloned(),
        status: RunStatus::Cancelled,
        error: Some(why.to_string()),
        reply: None,
        claimed: dropped.clone(),
    };
    for id in runs {
        tracing::info!(run_id = %id, session = %session_key, "queued run cancelled: {why}");
        rt.emit(Event::RunEnded(ended(Some(id))));
    }
    if runs.is_empty() && !dropped.is_empty() {
        // No run would have taken them (steer mode): only their waiters need to know.
        rt.events.run_ends.publish(&ended(None));
    }
    Ok(dropped)
}

/// `agent:<id>:…` → `<id>`.
fn agent_of_key(key: &str) -> Option<String> {
    let mut parts = key.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("agent"), Some(id), Some(_)) if !id.is_empty() => Some(id.to_string()),
        _ => None,
    }
}

/// After a run ended (and stopped being the session's active run) with `waiting` messages
/// left in its session's inbox (counted when it ended): if any still wait and no run is
/// queued for them, queue one.
///
/// In `steer` mode the count is not enough: a message stored after the run's end was
/// committed but while it still looked active was left to it, so the inbox is read again
/// now that it no longer is. (A message's submit stores it, then looks at the active run:
/// one of the two sides always sees the other.) In the other modes a message only counts
/// on a queued run, which has not claimed yet.
pub async fn after_run(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    waiting: i64,
) -> Result<()> {
    let steer = rt.config().messages.queue.mode == QueueMode::Steer;
    if (waiting == 0 && !steer) || rt.tasks.shutdown.is_cancelled() {
        return Ok(());
    }
    if rt.lanes.get(lane_for(session_key)).has_queued(session_key) {
        return Ok(());
    }
    if rt.store.inbox_len(session_key).await? == 0 {
        return Ok(());
    }
    let session = rt.store.ensure_session(session_key, agent_id, None).await?;
    let claim_all = rt.config().messages.queue.mode != QueueMode::Followup;
    enqueue_new_run(
        rt,
        session_key,
        agent_id,
        &session.id,
        claim_all,
        session.origin.as_ref(),
    )
    .await?;
    Ok(())
}
