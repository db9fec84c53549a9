//! From an accepted message to queued runs: the busy-session modes (docs/decisions.md)
//! (`collect`, `followup`, `interrupt`, `steer`), durable run creation, and recovery of
//! unfinished runs at start.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use switchboard_channels::Origin;

mod observe;
pub mod reset;
mod waiting;

pub use waiting::{after_run, drop_waiting, recover, take_over};

use super::{run, AgentError};
use crate::config::QueueMode;
use crate::queue::{self, Job, Slot};
use crate::runtime::{CancelReason, Runtime};
use crate::store::{NewInbound, NewRun, NewTurn, Result, RunRow, StoreError};

/// What `submit_message` did.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    /// Inbox id of the message; the run that claims it reports it in `run.ended`.
    pub inbox_id: i64,
    /// The run enqueued for it, if a new one was needed.
    pub run_id: Option<String>,
}

/// The lane a session's runs go on (a scheduled job's own session: `cron`).
pub fn lane_for(session_key: &str) -> &'static str {
    use crate::session_key::{KeyKind, SessionKey};
    match SessionKey::parse(session_key)
        .as_ref()
        .map(SessionKey::kind)
    {
        Ok(KeyKind::Subagent { .. }) => queue::SUBAGENT,
        Ok(KeyKind::Cron { .. }) => queue::CRON,
        _ => queue::MAIN,
    }
}

/// A message submitted to a session: what was said, by whom, from which chat, and the
/// agent that answers it.
#[derive(Debug, Clone, Copy)]
pub struct Submission<'a> {
    pub session_key: &'a str,
    pub agent_id: &'a str,
    /// The chat it came from (its replies go there).
    pub origin: &'a Origin,
    pub sender_id: &'a str,
    pub text: &'a str,
}

/// Accept a message: store it (committed first), then make sure a run will take it,
/// following `messages.queue.mode`.
pub async fn submit_message(
    rt: &Arc<Runtime>,
    s: &Submission<'_>,
) -> std::result::Result<Submitted, AgentError> {
    // Without a message id there is no dedupe, so a message is always taken.
    submit(rt, s, None)
        .await?
        .ok_or(AgentError::DuplicateWithoutId)
}

/// [`submit_message`] for a message with a platform `message_id`: a message taken before
/// is ignored (`Ok(None)`); dedupe and queueing commit together.
pub async fn submit_message_once(
    rt: &Arc<Runtime>,
    s: &Submission<'_>,
    message_id: &str,
) -> Result<Option<Submitted>> {
    submit(rt, s, Some(message_id)).await
}

async fn submit(
    rt: &Arc<Runtime>,
    s: &Submission<'_>,
    message_id: Option<&str>,
) -> Result<Option<Submitted>> {
    let Submission {
        session_key,
        agent_id,
        origin,
        sender_id,
        text,
    } = *s;
    // `session.reset`: a quiet session starts fresh before this message (docs/context.md).
    reset::apply(rt, session_key).await?;
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
    let inbound = NewInbound {
        session_key,
        origin,
        sender_id,
        text,
        message_id,
    };
    // A run that its lane would start at once starts in the same transaction, which also
    // ensures the session.
    if let Some(run_id) = planned.as_deref() {
        if let Some(slot) = lane.try_start(session_key) {
            let turn = NewTurn {
                agent_id,
                inbound,
                run_id,
                lane: lane_for(session_key),
                claim_all,
                model: None,
            };
            match start_now(rt, slot, turn).await {
                // Shared mode: another process runs this session's run; the message is
                // accepted with a queued run, which waits for it on this lane.
                Err(StoreError::SessionBusy(_)) => {}
                done => return done,
            }
        }
    }
    let session = rt
        .store
        .ensure_session(session_key, agent_id, Some(origin))
        .await?;
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
/// no run of it is active or queued): the session, the message, the run row, the start
/// (claim and transcript) commit together, and the run goes on from there. This saves the
/// run a second write round trip before its model call.
async fn start_now(rt: &Arc<Runtime>, slot: Slot, turn: NewTurn<'_>) -> Result<Option<Submitted>> {
    let choices = rt.store.session_choices(turn.inbound.session_key).await?;
    let setup = run::Setup::new(rt, turn.agent_id, None, &choices);
    let turn = NewTurn {
        model: setup.model_reference(),
        ..turn
    };
    let session_key = turn.inbound.session_key;
    // Active before it commits, as a queued run is before its start commits.
    let active = run::Activation::new(rt, session_key, turn.run_id);
    let (session, started) = rt.store.open_and_start(&turn).await?;
    let Some((inbox_id, row, started)) = started else {
        return Ok(None);
    };
    let run_id = row.id.clone();
    let lane = lane_for(session_key);
    let span = observe::run_span(session_key, &run_id);
    slot.run(observe::observed(
        rt.clone(),
        lane,
        span,
        guarded(
            rt.clone(),
            run_id.clone(),
            run::execute_started(rt.clone(), row, session, setup, active, started),
        ),
    ));
    Ok(Some(Submitted {
        inbox_id,
        run_id: Some(run_id),
    }))
}

/// Whether a message for a session needs a run of its own (docs/decisions.md: busy
/// sessions): in `followup` mode always, else unless a run is queued (it claims the
/// message) or, in `steer` mode, one is running (its next model call takes it). In
/// `interrupt` mode the running one is cancelled, and a new run takes the message.
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
            let span = observe::run_span(&key, &id);
            let lane = lane_for(&key);
            Box::pin(observe::observed(
                rt2.clone(),
                lane,
                span,
                guarded(rt2, id, run),
            ))
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
