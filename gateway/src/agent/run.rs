//! The agent loop of one run: claim waiting messages, call the model, execute tool
//! calls, store every message as it happens, and end the run with its reply queued in
//! the outbox (in the same transaction). Cancellation is one token for the whole run.
//! The loop's steps are in `steps`, the run's end in `end`, what follows it in `after`.

mod after;
mod end;
mod fallback;
mod fitting;
pub mod heartbeat;
mod outcome;
mod steps;
mod stream;
mod thinking;

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use switchboard_channels::Origin;

use super::models::{self, ModelError, ResolvedModel};
use super::provider::{ChatMessage, Usage};
use super::{prompt, transcript};
use crate::config::{self, AgentEntry, Config};
use crate::events::{Event, RunEnded};
use crate::runtime::{ActiveRun, CancelReason, Runtime};
use crate::store::{
    now_ms, Claim, MessageRow, RunFinished, RunRow, RunStatus, SessionRow, Started, StoreError,
};
use after::after;
pub use after::after_panic;
use end::{finish, finish_failed, finish_with_reply, stopped_before_start, stopped_waiting};
use outcome::Failure;
use steps::{run_loop, LoopCtx, LoopEnd};

/// Shared mode: how long a run whose session runs on another process waits before it
/// tries to start again.
const SESSION_BUSY_RETRY: Duration = Duration::from_millis(500);

/// A run to its end, on the heap: a run's state machine is tens of kilobytes (the model
/// call, every tool's), and a future is moved by copying it whole, several times on its
/// way onto a lane (the panic guard, the slot, the task). Boxed where it is made, only the
/// pointer moves.
pub type RunFuture = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Run `run_id` to its end (`row`: its row, if the caller has it; else it is read), as
/// the session's active run `active` (made so when its lane started it). Errors are
/// logged and recorded on the run.
pub fn execute(
    rt: Arc<Runtime>,
    run_id: String,
    row: Option<RunRow>,
    active: Activation,
) -> RunFuture {
    Box::pin(async move {
        let ended = execute_inner(&rt, &run_id, row, active).await;
        after(&rt, &run_id, ended).await;
    })
}

/// Run a run that was started in the transaction that accepted its message (see
/// `dispatch`): `setup` and `active` are what it was started with, `started` what its
/// start found.
pub fn execute_started(
    rt: Arc<Runtime>,
    run: RunRow,
    session: SessionRow,
    setup: Setup,
    active: Activation,
    started: Started,
) -> RunFuture {
    Box::pin(async move {
        let run_id = run.id.clone();
        let ended = run_started(&rt, run, &session, setup, active, started).await;
        after(&rt, &run_id, ended).await;
    })
}

/// Progress shared between the loop and the code that ends the run. A resumed run starts
/// from what its row recorded before the restart (steps and usage), so its step budget,
/// its Stats and its cost go on from there.
#[derive(Default)]
struct Progress {
    steps: u32,
    usage: Usage,
    /// Inbox ids of the messages this run claimed (in this process).
    claimed: Vec<i64>,
    /// Where the run's replies go: the chat of the newest message it claimed.
    reply_origin: Option<Origin>,
    /// The scheduled job this turn answers (its answer is headed with the job's name).
    cron_job: Option<String>,
    /// The run's cost so far, each call priced by the model that served it (a fallback's
    /// price when a fallback answered); `None` while no call had a priced model.
    cost_usd: Option<f64>,
    /// The model that served the run's latest call in this process.
    served_by: Option<String>,
    /// The prompt tokens of the run's latest call in this process (how full the window
    /// was), stored again with the run's end.
    context_tokens: Option<i64>,
}

impl Progress {
    fn of(run: &RunRow) -> Progress {
        Progress {
            steps: run.steps.max(0) as u32,
            usage: Usage {
                input_tokens: run.input_tokens.max(0) as u64,
                output_tokens: run.output_tokens.max(0) as u64,
            },
            claimed: Vec::new(),
            reply_origin: run.origin.clone(),
            cron_job: None,
            cost_usd: run.cost_usd,
            served_by: None,
            context_tokens: None,
        }
    }
}

/// What a run is set up with before it starts: the config in force, its agent's entry and
/// its model.
pub struct Setup {
    cfg: Arc<Config>,
    agent: Option<AgentEntry>,
    /// The agent's definition (built-in, file or config), for its instructions, tool list
    /// and limits.
    def: Option<Arc<crate::agents::AgentDef>>,
    model: Result<ResolvedModel, ModelError>,
    /// The session's `/think` level, if it chose one.
    thinking: Option<String>,
}

impl Setup {
    /// The model this setup resolved (`/compact` summarizes with the run's model).
    pub fn into_model(self) -> Result<ResolvedModel, ModelError> {
        self.model
    }

    /// For a run of `agent_id`, with `model` if the run names one, else the session's
    /// `/model` choice (`choices`, which also hold its `/think` level), else the agent's or the default model
    /// (`models::resolve_for`, with the agent's fallbacks).
    pub fn new(
        rt: &Runtime,
        agent_id: &str,
        model: Option<&str>,
        choices: &crate::store::SessionChoices,
    ) -> Setup {
        let cfg = rt.config();
        let agent = config::agent_entry(&cfg, agent_id);
        let def = rt.agents(&cfg).get(agent_id).cloned();
        let pick = models::Pick {
            run: model,
            session: choices.model.as_deref(),
            agent: agent.as_ref(),
            definition: def.as_ref().and_then(|d| d.model.as_deref()),
        };
        let mut model = models::resolve_for(&cfg, &pick, &rt.http, &rt.http.keys);
        // A `/model` choice the config no longer allows (its provider removed) gives way to
        // the agent's model rather than failing every turn of the session.
        if let (Err(e), Some(chosen)) = (&model, pick.session.filter(|_| pick.run.is_none())) {
            tracing::warn!(model = %chosen, error = %e, "the session's /model choice cannot be used; using the agent's model");
            let pick = models::Pick {
                session: None,
                ..pick
            };
            model = models::resolve_for(&cfg, &pick, &rt.http, &rt.http.keys);
        }
        Setup {
            cfg,
            agent,
            def,
            model,
            thinking: choices.thinking.clone(),
        }
    }

    /// The model reference recorded when the run starts.
    pub fn model_reference(&self) -> Option<&str> {
        self.model.as_ref().ok().map(|m| m.reference.as_str())
    }
}

/// A run made the active run of its session (what `/stop` and the busy-session modes
/// look at); it stops being that when this is dropped.
pub struct Activation {
    rt: Arc<Runtime>,
    key: String,
    active: ActiveRun,
}

impl Activation {
    pub fn new(rt: &Arc<Runtime>, session_key: &str, run_id: &str) -> Activation {
        let active = ActiveRun {
            run_id: run_id.to_string(),
            cancel: rt.tasks.shutdown.child_token(),
            reason: Arc::new(Mutex::new(None)),
        };
        rt.set_active(session_key, active.clone());
        Activation {
            rt: rt.clone(),
            key: session_key.to_string(),
            active,
        }
    }
}

impl Drop for Activation {
    fn drop(&mut self) {
        self.rt.clear_active(&self.key, &self.active.run_id);
    }
}

/// Runs it; `None` when there was nothing to run or it was checkpointed for a restart.
async fn execute_inner(
    rt: &Arc<Runtime>,
    run_id: &str,
    row: Option<RunRow>,
    active: Activation,
) -> Result<Option<(RunRow, RunFinished)>, StoreError> {
    let row = match row {
        Some(row) => Some(row),
        None => rt.store.get_run(run_id).await?,
    };
    let Some(run) = row else {
        tracing::warn!(run_id, "run not found");
        return Ok(None);
    };
    if run.status.is_terminal() {
        return Ok(None);
    }
    let session = rt
        .store
        .ensure_session(&run.session_key, &run.agent_id, None)
        .await?;
    if active.active.cancel.is_cancelled() {
        return stopped_before_start(rt, run, &active).await;
    }
    let choices = rt.store.session_choices(&run.session_key).await?;
    let setup = Setup::new(rt, &run.agent_id, run.model.as_deref(), &choices);
    // A run that was already running when the process stopped claimed its messages then;
    // resuming it must not take more (they belong to the runs queued behind it).
    let resuming = run.status == RunStatus::Running;
    if resuming {
        tracing::info!(run_id, "resuming run from its stored transcript");
    }
    let claim = (!resuming).then_some(if run.claim_all {
        Claim::All
    } else {
        Claim::Oldest
    });
    let mut waited = false;
    let started = loop {
        let start = rt.store.start_run(
            run_id,
            &run.session_key,
            &session.id,
            setup.model_reference(),
            claim,
        );
        match start.await {
            // Shared mode: another process runs a run of this session; this one keeps its
            // place on the lane and starts once that one has ended (or its process died).
            Err(StoreError::SessionBusy(_)) => {
                if !std::mem::replace(&mut waited, true) {
                    tracing::info!(run_id, session = %run.session_key, "waiting for this session's run on another process");
                }
                tokio::select! {
                    _ = tokio::time::sleep(SESSION_BUSY_RETRY) => {}
                    _ = active.active.cancel.cancelled() => {
                        return stopped_before_start(rt, run, &active).await;
                    }
                }
            }
            other => break other?,
        }
    };
    let Some(started) = started else {
        tracing::info!(run_id, "run ended before it started (stopped while queued)");
        return Ok(None);
    };
    run_started(rt, run, &session, setup, active, started).await
}

/// The run from its start on: the loop, then its end.
async fn run_started(
    rt: &Arc<Runtime>,
    run: RunRow,
    session: &SessionRow,
    setup: Setup,
    activation: Activation,
    started: Started,
) -> Result<Option<(RunRow, RunFinished)>, StoreError> {
    let run_id = run.id.as_str();
    rt.emit(Event::RunStarted {
        session_key: run.session_key.clone(),
        run_id: run.id.clone(),
    });
    let Started {
        claimed,
        transcript: rows,
        started_at,
    } = started;
    let Setup {
        cfg,
        agent,
        def,
        model,
        thinking: session_thinking,
    } = setup;
    let active = &activation.active;
    let is_subagent = run.lane == crate::queue::SUBAGENT;

    let mut progress = Progress::of(&run);
    progress.claimed.extend(claimed.iter().map(|c| c.id));
    // Replies go where the newest message of this turn came from.
    if let Some(last) = claimed.last() {
        progress.reply_origin = Some(last.origin.clone());
    }
    // The run's span (`dispatch::observe`) names the channel its replies go to.
    if let Some(origin) = &progress.reply_origin {
        tracing::Span::current().record("channel", origin.channel.as_str());
    }
    progress.cron_job = crate::session_key::cron_job_of(
        &run.session_key,
        claimed.last().map(|c| c.sender_id.as_str()),
    );
    if claimed.is_empty() && !transcript::needs_answer(&rows) {
        let finished = finish(rt, &run, RunStatus::Succeeded, None, &progress, None, None).await?;
        return Ok(Some((run, finished)));
    }
    let model = match model {
        Ok(m) => m,
        Err(e) => {
            let failure = Failure::NoModel(e.to_string());
            let finished = finish_failed(rt, &run, &progress, None, failure).await?;
            return Ok(Some((run, finished)));
        }
    };
    // A run that has made no model call yet ends here once the day's budget is spent (a
    // run resumed after a restart with calls made goes on: it began before the budget was
    // reached).
    if run.steps == 0 {
        if let Some(message) = super::usage::over_budget(&rt.store, &cfg).await? {
            let failure = Failure::Budget(message);
            let finished = finish_failed(rt, &run, &progress, None, failure).await?;
            return Ok(Some((run, finished)));
        }
    }
    let typing = progress
        .reply_origin
        .as_ref()
        .and_then(|o| rt.channel(&o.channel).map(|c| (c, o.clone())));
    if let Some((ch, o)) = &typing {
        let _ = ch.typing(o, true).await;
    }

    let mut workspace = config::workspace_for(&cfg, agent.as_ref(), &rt.home.state_dir);
    // A child isolated in its own git worktree works there.
    if is_subagent {
        if let Some(dir) = rt.store.worktree_workdir(&run.session_key).await? {
            workspace = dir.into();
        }
    }
    let system = prompt::system_prompt(
        &rt.parts
            .get::<super::prompt::Bootstrap>()
            .files(&workspace, is_subagent),
        agent
            .as_ref()
            .and_then(|a| a.system_prompt.as_deref())
            .or(def.as_ref().and_then(|d| d.instructions.as_deref())),
        is_subagent,
    );
    let mut tools =
        rt.parts
            .get::<super::tools::ToolRegistry>()
            .for_run(&cfg, agent.as_ref(), is_subagent);
    // An agent definition's tool list narrows the policy; it never widens it.
    if let Some(d) = &def {
        tools.retain(|name, _| d.tools.permits(name));
    }
    let run_timeout = match run.timeout_ms {
        Some(ms) => Some(Duration::from_millis(ms.max(0) as u64)),
        None if is_subagent => None,
        None => def
            .as_ref()
            .and_then(|d| d.timeout)
            .or(cfg.agents.defaults.timeout),
    };
    // The run's clock runs from its first start, through restarts: a resumed run gets
    // what is left of its timeout.
    let first_start = started_at.or(run.started_at).unwrap_or_else(now_ms);
    let elapsed = Duration::from_millis((now_ms() - first_start).max(0) as u64);
    let time_left = run_timeout.map(|limit| limit.saturating_sub(elapsed));
    let cancel = active.cancel.clone();
    let ctx = LoopCtx {
        rt,
        run: &run,
        session_id: &session.id,
        cfg: &cfg,
        agent: agent.as_ref(),
        workspace: &workspace,
        model: &model,
        system,
        tools,
        is_subagent,
        max_steps: def
            .as_ref()
            .and_then(|d| d.max_steps)
            .unwrap_or(cfg.agents.defaults.max_steps),
        thinking: thinking::of_run(
            rt,
            &run,
            is_subagent,
            def.as_deref(),
            &cfg,
            session_thinking.as_deref(),
        )
        .await,
        cancel: cancel.clone(),
    };

    // Sub-agent runs only: no progress for `staleAfter` ends the run `timeout`.
    let stale_after =
        is_subagent.then(|| heartbeat::stale_after(cfg.agents.defaults.subagents.stale_after));
    let mut stale_for = None;
    let outcome = if time_left == Some(Duration::ZERO) {
        Some(None)
    } else {
        let beat = heartbeat::Heartbeat::new();
        let fut = beat.scope(run_loop(&ctx, rows, &mut progress));
        let stale = async {
            match stale_after {
                Some(after) => beat.stale(after).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = maybe_timeout(time_left, fut) => Some(r),
            d = stale => {
                stale_for = Some(d);
                Some(None)
            }
            _ = cancel.cancelled() => None,
        }
    };
    if let Some((ch, o)) = &typing {
        let _ = ch.typing(o, false).await;
    }
    let finished = match outcome {
        None => match active.reason() {
            Some(CancelReason::Shutdown) | None => {
                // Checkpoint: everything so far is stored; the run stays `running` and
                // resumes (or, per `subagents.onRestart`, is interrupted) at the next start.
                rt.store
                    .checkpoint_run(
                        run_id,
                        progress.steps as i64,
                        progress.usage.input_tokens as i64,
                        progress.usage.output_tokens as i64,
                    )
                    .await?;
                tracing::info!(
                    run_id,
                    "run interrupted by shutdown; it resumes at the next start"
                );
                rt.emit(Event::RunEnded(RunEnded {
                    session_key: run.session_key.clone(),
                    run_id: Some(run.id.clone()),
                    status: RunStatus::Interrupted,
                    error: None,
                    reply: None,
                    claimed: progress.claimed.clone(),
                }));
                return Ok(None);
            }
            Some(_) => {
                let mut finished =
                    finish_failed(rt, &run, &progress, Some(&model), Failure::Stopped).await?;
                finished.waiting = stopped_waiting();
                finished
            }
        },
        Some(end) => {
            let step_limit_agent = def
                .as_ref()
                .and_then(|d| d.max_steps)
                .map(|_| run.agent_id.as_str());
            let ended = match stale_for {
                Some(d) => Err(Failure::Stale(d)),
                None => answer_or_failure(end, run_timeout, step_limit_agent)?,
            };
            match ended {
                Ok(text) => {
                    let mut deliver = (!text.trim().is_empty()).then(|| text.clone());
                    if let Some(job) = &progress.cron_job {
                        if let Some(answer) = deliver.take() {
                            deliver = Some(headed(rt, job, answer).await);
                        }
                    }
                    finish_with_reply(rt, &run, &session.id, &progress, &model, text, deliver)
                        .await?
                }
                Err(failure) => finish_failed(rt, &run, &progress, Some(&model), failure).await?,
            }
        }
    };
    Ok(Some((run, finished)))
}

/// The loop's end (`None`: it ran out of `run_timeout`) as the run's final answer or the
/// way it failed; a store error ends the run as an error.
/// `step_limit_agent`: the agent whose own `maxSteps` bounded the run, if it had one.
fn answer_or_failure(
    end: Option<LoopEnd>,
    run_timeout: Option<Duration>,
    step_limit_agent: Option<&str>,
) -> Result<Result<String, Failure>, StoreError> {
    Ok(match end {
        Some(LoopEnd::Final(text)) => Ok(text),
        None => Err(Failure::TimedOut(run_timeout.unwrap_or_default())),
        Some(LoopEnd::StepLimit(n)) => {
            Err(Failure::StepLimit(n, step_limit_agent.map(str::to_string)))
        }
        Some(LoopEnd::Provider(e)) => Err(Failure::Provider(e.to_string())),
        Some(LoopEnd::Fatal(msg)) => Err(Failure::Fatal(msg)),
        Some(LoopEnd::Store(e)) => return Err(e),
    })
}

async fn maybe_timeout<F: std::future::Future>(
    limit: Option<Duration>,
    fut: F,
) -> Option<F::Output> {
    match limit {
        Some(d) => tokio::time::timeout(d, fut).await.ok(),
        None => Some(fut.await),
    }
}

/// Convert the transcript for inspection (used by commands and the API).
pub fn chat_view(rows: &[MessageRow]) -> Vec<ChatMessage> {
    transcript::to_chat(rows)
}

/// A scheduled job's `answer`, headed with the name of `job` (its id when it has no name or is gone).
async fn headed(rt: &Runtime, job: &str, answer: String) -> String {
    let name = match rt.store.cron_job::<crate::config::CronJobConfig>(job).await {
        Ok(Some(j)) => j.spec.name.unwrap_or(j.id),
        _ => job.to_string(),
    };
    format!("⏰ {name}\n\n{answer}")
}
