//! Running a due job: its message goes into its session (its own, `agent:<id>:cron:<jobId>`,
//! on the `cron` lane; or the agent's main session, in turn with the conversation) with
//! the job's next time, in one transaction; then a run is queued to take it. A job whose
//! last run has not ended is skipped (logged, counted), never stacked.

use std::sync::Arc;

use switchboard_channels::{ChatKind, Origin};

use crate::agent::dispatch;
use crate::config::{CronJobConfig, CronSession, QueueMode};
use crate::runtime::Runtime;
use crate::session_key::SessionKey;
use crate::store::{now_ms, CronFire, CronJobRow, JobSource, StoreError};

use super::schedule::Schedule;
use super::SENDER_PREFIX;

/// What [`fire`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fired {
    /// The message is queued in `session_key` (inbox id `inbox_id`).
    Queued { session_key: String, inbox_id: i64 },
    /// The job's last run had not ended; or (a scheduled firing) another process fired
    /// this due time already.
    Skipped,
}

/// The agent a job runs as.
pub fn agent_of(rt: &Runtime, job: &CronJobConfig) -> String {
    job.agent_id
        .clone()
        .unwrap_or_else(|| crate::config::default_agent_id(&rt.config()))
}

/// The session a job's turns run in.
pub fn session_key(agent: &str, job: &CronJobConfig) -> String {
    match job.session {
        CronSession::Isolated => SessionKey::cron(agent, &job.id),
        CronSession::Main => SessionKey::main(agent),
    }
    .to_string()
}

/// Where a job's answer goes: its `deliver` chat, else nowhere (the API channel: the
/// answer stays in the session).
pub fn origin(job: &CronJobConfig) -> Origin {
    match &job.deliver {
        Some(d) => Origin {
            channel: d.channel.clone(),
            account: None,
            chat_id: d.chat_id.clone(),
            thread_id: d.thread_id.clone(),
            kind: ChatKind::Direct,
            reply_handle: None,
        },
        None => Origin {
            channel: crate::outbox::API_CHANNEL.into(),
            account: None,
            chat_id: format!("cron:{}", job.id),
            thread_id: None,
            kind: ChatKind::Direct,
            reply_handle: None,
        },
    }
}

/// The first time after `now` the schedule is due, and not before `floor` (when set).
fn next_time(schedule: &Schedule, now: i64, floor: Option<i64>) -> Option<i64> {
    let next = schedule.next_after(now)?;
    match floor {
        Some(floor) if next < floor => match schedule {
            Schedule::Every(_) => Some(floor),
            _ => schedule.next_after(floor - 1),
        },
        _ => Some(next),
    }
}

/// Run `job` now. `manual` (`/cron run`, the tool, the CLI): its next time stays as it is.
pub async fn fire(rt: &Arc<Runtime>, job: &CronJobRow, manual: bool) -> Result<Fired, StoreError> {
    fire_at(rt, job, manual, now_ms()).await
}

/// [`fire`] at `now` (unix ms; the scheduler's clock): the next time is the first after it.
pub async fn fire_at(
    rt: &Arc<Runtime>,
    job: &CronJobRow,
    manual: bool,
    now: i64,
) -> Result<Fired, StoreError> {
    let schedule = Schedule::parse(&job.spec.schedule).ok();
    // A job a run made fires at most every `cron.minInterval`, whatever its schedule says
    // (the operator's jobs are not bounded).
    let floor = match job.source {
        JobSource::Tool => {
            let min = rt.config().cron.min_interval;
            Some(now.saturating_add(i64::try_from(min.as_millis()).unwrap_or(i64::MAX)))
        }
        JobSource::Config | JobSource::Cli => None,
    };
    let next = if manual {
        job.next_run_at
    } else {
        schedule.as_ref().and_then(|s| next_time(s, now, floor))
    };
    if let Some(last) = job.last_inbox_id {
        if rt.store.cron_job_in_flight(last).await? {
            tracing::warn!(job = %job.id, "cron: the job came due while its last run is still going; skipped");
            if !manual {
                rt.store.skip_cron_job(&job.id, next).await?;
            }
            return Ok(Fired::Skipped);
        }
    }
    let agent = agent_of(rt, &job.spec);
    let key = session_key(&agent, &job.spec);
    let origin = origin(&job.spec);
    let session = rt.store.ensure_session(&key, &agent, Some(&origin)).await?;
    let sender = format!("{SENDER_PREFIX}{}", job.id);
    let inbox_id = rt
        .store
        .fire_cron_job(&CronFire {
            job_id: &job.id,
            session_key: &key,
            origin: &origin,
            sender_id: &sender,
            text: &job.spec.message,
            next_run_at: next,
            disable: !manual && schedule.as_ref().is_some_and(Schedule::is_once),
            due_at: if manual { None } else { job.next_run_at },
        })
        .await?;
    let Some(inbox_id) = inbox_id else {
        tracing::info!(job = %job.id, "cron: this due time was fired already (by another process)");
        return Ok(Fired::Skipped);
    };
    tracing::info!(job = %job.id, session = %key, manual, "cron: job queued");
    // A run takes it: one queued for the session already, else a new one. (A crash before
    // this leaves the message waiting; recovery at start queues its run.)
    let mode = rt.config().messages.queue.mode;
    let lane = rt.lanes.get(dispatch::lane_for(&key));
    if mode == QueueMode::Followup || !lane.has_queued(&key) {
        dispatch::enqueue_new_run(
            rt,
            &key,
            &agent,
            &session.id,
            mode != QueueMode::Followup,
            Some(&origin),
        )
        .await?;
    }
    Ok(Fired::Queued {
        session_key: key,
        inbox_id,
    })
}
