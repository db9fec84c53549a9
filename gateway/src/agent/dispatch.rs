//! From an accepted message to queued runs: the busy-session modes of SPEC §4
//! (`collect`, `followup`, `interrupt`, `steer`), durable run creation, and recovery of
//! unfinished runs at start.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use switchboard_channels::Origin;

use super::run;
use crate::config::QueueMode;
use crate::queue::{self, Job, Slot};
use crate::runtime::{CancelReason, Runtime};
use crate::store::{NewInbound, NewRun, Result, RunRow, SessionRow};

/// What `submit_message` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    /// Inbox id of the message; the run that claims it reports it in `run.ended`.
    pub inbox_id: i64,
    /// The run enqueued for it, if a new one was needed.
    pub run_id: Option<String>,
}

/// The lane a session's runs go on.
pub fn lane_for(session_key: &str) -> &'static str {
    if session_key.contains(":subagent:") {
        queue::SUBAGENT
    } else {
        queue::MAIN
    }
}

/// Accept a message for `session_key`: store it (committed first), then make sure a run
/// will take it, following `messages.queue.mode`. With a platform `message_id`, a
/// message taken before is ignored (`Ok(None)`): dedupe and queueing commit together.
pub async fn submit_message(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    origin: &Origin,
    sender_id: &str,
    text: &str,
) -> Result<Submitted> {
    let sub = submit(rt, session_key, agent_id, origin, sender_id, text, None).await?;
    // Without a message id there is no dedupe, so a message is always taken.
    sub.ok_or_else(|| {
        crate::store::StoreError::Corrupt("message without an id reported as a duplicate".into())
    })
}

/// [`submit_message`] for a message with a platform id: `Ok(None)` if it was taken before.
pub async fn submit_message_once(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    origin: &Origin,
    sender_id: &str,
    text: &str,
    message_id: &str,
) -> Result<Option<Submitted>> {
    submit(
        rt,
        session_key,
        agent_id,
        origin,
        sender_id,
        text,
        Some(message_id),
    )
    .await
}

async fn submit(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    origin: &Origin,
    sender_id: &str,
    text: &str,
    message_id: Option<&str>,
) -> Result<Option<Submitted>> {
    let session = rt
        .store
        .ensure_session(session_key, agent_id, Some(origin))
        .await?;
    let mode = rt.config().messages.queue.mode;
    let lane = rt.lanes.get(lane_for(session_key));
    let claim_all = mode != QueueMode::Followup;
    // If the session needs a run for this message already, its row commits with the
    // message (one transaction). Otherwise the message is stored first and the session
    // looked at again after: a run that ends in between either claimed it, or is seen
    // to have ended and a new one is queued.
    let planned = need_run(
        mode,
        rt.active_run(session_key).is_some(),
        lane.has_queued(session_key),
    )
    .then(|| uuid::Uuid::new_v4().to_string());
    let run = planned.as_deref().map(|id| {
        new_run(
            id,
            session_key,
            agent_id,
            &session.id,
            claim_all,
            Some(origin),
        )
    });
    let inbound = NewInbound {
        session_key,
        origin,
        sender_id,
        text,
        message_id,
    };
    // A run that its lane would start at once starts in the same transaction.
    if let Some(run) = &run {
        if let Some(slot) = lane.try_start(session_key) {
            return start_now(rt, slot, session.clone(), &inbound, run).await;
        }
    }
    let Some((inbox_id, row)) = rt.store.accept_message(&inbound, run.as_ref()).await? else {
        return Ok(None);
    };
    let active = rt.active_run(session_key);
    if let (QueueMode::Interrupt, Some(a)) = (mode, &active) {
        a.cancel(CancelReason::Superseded);
    }
    let run_id = match row {
        Some(row) => {
            schedule_row(rt, row);
            planned
        }
        None if need_run(mode, active.is_some(), lane.has_queued(session_key)) => Some(
            enqueue_new_run(
                rt,
                session_key,
                agent_id,
                &session.id,
                claim_all,
                Some(origin),
            )
            .await?,
        ),
        None => None,
    };
    Ok(Some(Submitted { inbox_id, run_id }))
}

/// Accept a message with its run started at once, in `slot` (taken for its session, so
/// no run of it is active or queued): the message, the run row, the start (claim and
/// transcript) commit together, and the run goes on from there. This saves the run a
/// second write round trip before its model call.
async fn start_now(
    rt: &Arc<Runtime>,
    slot: Slot,
    session: SessionRow,
    inbound: &NewInbound<'_>,
    run: &NewRun<'_>,
) -> Result<Option<Submitted>> {
    let setup = run::Setup::new(rt, run.agent_id, run.model);
    // Active before it commits, as a queued run is before its start commits.
    let active = run::Activation::new(rt, run.session_key, run.id);
    let Some((inbox_id, row, started)) = rt
        .store
        .accept_and_start(inbound, run, setup.model_reference())
        .await?
    else {
        return Ok(None);
    };
    let run_id = row.id.clone();
    slot.run(guarded(
        rt.clone(),
        run_id.clone(),
        run::execute_started(rt.clone(), row, session, setup, active, started),
    ));
    Ok(Some(Submitted {
        inbox_id,
        run_id: Some(run_id),
    }))
}

/// Whether a message for a session needs a run of its own (SPEC §4): in `followup` mode
/// always, else unless a run is queued (it claims the message) or, in `steer` mode,
/// one is running (its next model call takes it). In `interrupt` mode the running one
/// is cancelled, and a new run takes the message.
fn need_run(mode: QueueMode, active: bool, queued: bool) -> bool {
    match mode {
        QueueMode::Followup => true,
        QueueMode::Collect | QueueMode::Interrupt => !queued,
        QueueMode::Steer => !queued && !active,
    }
}

/// A queued run of `session_key` on its lane.
fn new_run<'a>(
    id: &'a str,
    session_key: &'a str,
    agent_id: &'a str,
    session_id: &'a str,
    claim_all: bool,
    origin: Option<&'a Origin>,
) -> NewRun<'a> {
    NewRun {
        id,
        session_key,
        session_id,
        agent_id,
        lane: lane_for(session_key),
        claim_all,
        origin,
        model: None,
        timeout_ms: None,
    }
}

/// Create a run row (committed) and queue it on its lane.
pub async fn enqueue_new_run(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    session_id: &str,
    claim_all: bool,
    origin: Option<&Origin>,
) -> Result<String> {
    let run_id = uuid::Uuid::new_v4().to_string();
    let new = new_run(
        &run_id,
        session_key,
        agent_id,
        session_id,
        claim_all,
        origin,
    );
    let row = rt.store.create_run(&new).await?;
    schedule_row(rt, row);
    Ok(run_id)
}

/// Put an existing run row on its lane (the run reads its row when it starts).
pub fn schedule(rt: &Arc<Runtime>, run_id: &str, session_key: &str) {
    enqueue(rt, run_id, session_key, None);
}

/// Put a run on its lane with the row it was just created (or found) with, which saves
/// reading it back when it starts. (Starting it checks it is still queued or running.)
pub fn schedule_row(rt: &Arc<Runtime>, row: RunRow) {
    let (id, key) = (row.id.clone(), row.session_key.clone());
    enqueue(rt, &id, &key, Some(row));
}

/// The run's job on its lane. The run becomes its session's active run the moment the
/// lane starts the job, before the job's first await: `/stop` and `/subagents stop` never
/// miss a run that left the queue but has not started yet.
fn enqueue(rt: &Arc<Runtime>, run_id: &str, session_key: &str, row: Option<RunRow>) {
    let rt2 = rt.clone();
    let (id, key) = (run_id.to_string(), session_key.to_string());
    rt.lanes.get(lane_for(session_key)).enqueue(Job {
        run_id: run_id.to_string(),
        session_key: session_key.to_string(),
        work: Box::new(move || {
            let active = run::Activation::new(&rt2, &key, &id);
            let run = run::execute(rt2.clone(), id.clone(), row, active);
            Box::pin(guarded(rt2, id, run))
        }),
    });
}

/// A run's job, made safe against a panic anywhere in it (provider, tool, store glue): the
/// panic is caught here, the run ends `failed` with a notice in its chat and a `run.ended`
/// event, and the lane slot is freed as after any job. (The run's state, its activation
/// included, is dropped with the panicked future before that.)
async fn guarded(rt: Arc<Runtime>, run_id: String, run: impl Future<Output = ()> + Send) {
    if let Err(panic) = AssertUnwindSafe(run).catch_unwind().await {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        run::after_panic(&rt, &run_id, &what).await;
    }
}

/// At start: queue every run that was queued or running when the process stopped (a
/// running one resumes from its stored transcript), and a run for any session whose
/// inbox holds messages that no run took.
pub async fn recover(rt: &Arc<Runtime>) -> Result<usize> {
    let runs = rt.store.unfinished_runs().await?;
    let mut n = 0;
    let interrupt =
        rt.config().agents.defaults.subagents.on_restart == crate::config::OnRestart::Interrupt;
    for run in &runs {
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
                archive_after_ms: crate::subagents::control::archive_after_ms(rt),
                ..crate::store::RunEnd::bare(
                    crate::store::RunStatus::Interrupted,
                    Some("interrupted by a gateway restart".into()),
                )
            };
            rt.store.finish_run(&run.id, &end).await?;
            continue;
        }
        tracing::info!(run_id = %run.id, session = %run.session_key, status = ?run.status, "recovering run");
        schedule_row(rt, run.clone());
        n += 1;
    }
    for waiting in rt.store.sessions_with_inbox().await? {
        let key = waiting.key;
        if runs.iter().any(|r| r.session_key == key) {
            continue;
        }
        if !waiting.active && key.contains(":subagent:") {
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
    let event = |run_id: Option<&str>| {
        serde_json::json!({
            "type": "run.ended",
            "runId": run_id,
            "sessionKey": session_key,
            "status": "cancelled",
            "error": why,
            "reply": null,
            "claimed": dropped,
        })
    };
    for id in runs {
        tracing::info!(run_id = %id, session = %session_key, "queued run cancelled: {why}");
        rt.emit_run_ended(session_key, event(Some(id)));
    }
    if runs.is_empty() && !dropped.is_empty() {
        // No run would have taken them (steer mode): only their waiters need to know.
        rt.run_ends
            .publish(session_key, &std::sync::Arc::new(event(None)));
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
    if (waiting == 0 && !steer) || rt.shutdown.is_cancelled() {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::runtime::testing;
    use crate::store::RunStatus;

    /// `/stop` right after its lane started a run, before the run got to its first await,
    /// stops it. (Catches: a run made its session's active run only after its first
    /// awaits, so that `/stop` found nothing to stop and the run went on.)
    #[tokio::test]
    async fn stop_catches_a_run_its_lane_has_just_started() {
        let (_dir, rt) = testing::runtime("{}").await;
        let key = "agent:main:main";
        let session = rt.store.ensure_session(key, "main", None).await.unwrap();
        let id = enqueue_new_run(&rt, key, "main", &session.id, true, None)
            .await
            .unwrap();
        // The lane had a free slot and started it; nothing has awaited since.
        assert_eq!(rt.active_run(key).map(|a| a.run_id), Some(id.clone()));
        assert_eq!(
            crate::commands::session::stop(&rt, key).await.unwrap(),
            "Stopped 1 run."
        );
        let status = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let run = rt.store.get_run(&id).await.unwrap().unwrap();
                if run.status.is_terminal() {
                    return run.status;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap();
        assert_eq!(status, RunStatus::Cancelled);
        assert!(rt.active_run(key).is_none());
    }
}
