//! The agent loop of one run: claim waiting messages, call the model, execute tool
//! calls, store every message as it happens, and end the run with its reply queued in
//! the outbox (in the same transaction). Cancellation is one token for the whole run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::models::{self, ModelError, ResolvedModel};
use super::provider::{
    complete_with_retry, ChatMessage, ModelRequest, ProviderError, RetryPolicy, Usage,
};
use super::tools::{Tool, ToolContext, ToolError};
use super::{dispatch, prompt, transcript};
use crate::config::{AgentEntry, Config, QueueMode};
use crate::routing;
use crate::runtime::{ActiveRun, CancelReason, Runtime};
use crate::store::{
    Claim, MessageRow, NewMessage, RunEnd, RunFinished, RunRow, RunStatus, SessionRow, Started,
    StoreError, ToolCallRecord,
};

/// Most characters of one tool result kept in the transcript.
const MAX_TOOL_RESULT: usize = 64 * 1024;
/// Upper bound on tokens the model may produce per call.
const MAX_TOKENS: u32 = 4096;

/// Run `run_id` to its end (`row`: its row, if the caller has it; else it is read).
/// Errors are logged and recorded on the run; never panics.
pub async fn execute(rt: Arc<Runtime>, run_id: String, row: Option<RunRow>) {
    let ended = execute_inner(&rt, &run_id, row).await;
    after(&rt, &run_id, ended).await;
}

/// Run a run that was started in the transaction that accepted its message (see
/// `dispatch`): `setup` and `active` are what it was started with, `started` what its
/// start found.
pub async fn execute_started(
    rt: Arc<Runtime>,
    run: RunRow,
    session: SessionRow,
    setup: Setup,
    active: Activation,
    started: Started,
) {
    let run_id = run.id.clone();
    let ended = run_started(&rt, run, &session, setup, active, started).await;
    after(&rt, &run_id, ended).await;
}

/// After a run: its announce, the session's waiting messages, or the record of a store
/// error that stopped it.
async fn after(
    rt: &Arc<Runtime>,
    run_id: &str,
    ended: Result<Option<(RunRow, RunFinished)>, StoreError>,
) {
    match ended {
        Ok(Some((run, finished))) => {
            if finished.announce {
                crate::subagents::announce::schedule(rt, &run.id);
            }
            if let Err(e) =
                dispatch::after_run(rt, &run.session_key, &run.agent_id, finished.waiting).await
            {
                tracing::error!(run_id, error = %e, "cannot schedule waiting messages");
            }
        }
        Ok(None) => {}
        Err(e) => {
            tracing::error!(run_id, error = %e, "run failed on a store error");
            let end = RunEnd {
                deliver: Some(format!("⚠️ Internal error, the run was stopped: {e}")),
                ..RunEnd::bare(RunStatus::Failed, Some(e.to_string()))
            };
            if let Ok(f) = rt.store.finish_run(run_id, &end).await {
                if f.announce {
                    crate::subagents::announce::schedule(rt, run_id);
                }
            }
            rt.outbox_wake.notify_one();
        }
    }
}

/// How the loop ended.
enum LoopEnd {
    /// The model's final answer, not yet stored.
    Final(String),
    StepLimit(u32),
    Provider(ProviderError),
    Fatal(String),
    Store(StoreError),
}

/// Progress shared between the loop and the code that ends the run.
#[derive(Default)]
struct Progress {
    steps: u32,
    usage: Usage,
    claimed: Vec<i64>,
}

/// What a run is set up with before it starts: the config in force, its agent's entry and
/// its model.
pub struct Setup {
    cfg: Arc<Config>,
    agent: Option<AgentEntry>,
    model: Result<ResolvedModel, ModelError>,
}

impl Setup {
    /// For a run of `agent_id`, with `model` if the run names one (else the agent's or the
    /// default model).
    pub fn new(rt: &Runtime, agent_id: &str, model: Option<&str>) -> Setup {
        let cfg = rt.config();
        let agent = routing::agent_entry(&cfg, agent_id);
        let reference = model.map(str::to_string).or_else(|| {
            models::default_reference(
                &cfg,
                agent.as_ref().and_then(|a| a.model.as_deref()),
                &rt.env_keys,
            )
        });
        let model = models::resolve(&cfg, reference.as_deref(), &rt.http, &rt.env_keys);
        Setup { cfg, agent, model }
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
            cancel: rt.shutdown.child_token(),
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
    let active = Activation::new(rt, &run.session_key, &run.id);
    let setup = Setup::new(rt, &run.agent_id, run.model.as_deref());
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
    let Some(started) = rt
        .store
        .start_run(
            run_id,
            &run.session_key,
            &session.id,
            setup.model_reference(),
            claim,
        )
        .await?
    else {
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
    rt.emit(
        &run.session_key,
        json!({"type": "run.started", "runId": run_id}),
    );
    let Started {
        claimed,
        transcript: rows,
    } = started;
    let Setup { cfg, agent, model } = setup;
    let active = &activation.active;
    let is_subagent = run.lane == crate::queue::SUBAGENT;

    let mut progress = Progress::default();
    progress.claimed.extend(claimed.iter().map(|c| c.id));
    // Replies go where the newest message of this turn came from.
    let reply_origin = claimed
        .last()
        .map(|c| c.origin.clone())
        .or(run.origin.clone());
    if claimed.is_empty() && !transcript::needs_answer(&rows) {
        let finished = finish(rt, &run, RunStatus::Succeeded, None, &progress, None, None).await?;
        return Ok(Some((run, finished)));
    }
    let model = match model {
        Ok(m) => m,
        Err(e) => {
            let msg = e.to_string();
            let finished = finish(
                rt,
                &run,
                RunStatus::Failed,
                Some(msg.clone()),
                &progress,
                None,
                Some(msg),
            )
            .await?;
            return Ok(Some((run, finished)));
        }
    };
    let typing = reply_origin
        .as_ref()
        .and_then(|o| rt.channel(&o.channel).map(|c| (c, o.clone())));
    if let Some((ch, o)) = &typing {
        let _ = ch.typing(o, true).await;
    }

    let workspace = routing::workspace_for(&cfg, agent.as_ref(), &rt.state_dir);
    let system = prompt::system_prompt(
        &rt.bootstrap.files(&workspace, is_subagent),
        agent.as_ref().and_then(|a| a.system_prompt.as_deref()),
        is_subagent,
    );
    let tools = rt.tools.for_run(&cfg, agent.as_ref(), is_subagent);
    let run_timeout = match run.timeout_ms {
        Some(ms) => Some(Duration::from_millis(ms.max(0) as u64)),
        None if is_subagent => None,
        None => cfg.agents.defaults.timeout,
    };
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
        cancel: cancel.clone(),
        origin: reply_origin.clone(),
    };

    let outcome = {
        let fut = run_loop(&ctx, rows, &mut progress);
        tokio::select! {
            r = maybe_timeout(run_timeout, fut) => Some(r),
            _ = cancel.cancelled() => None,
        }
    };
    if let Some((ch, o)) = &typing {
        let _ = ch.typing(o, false).await;
    }
    let finished = match outcome {
        None => match active.reason() {
            Some(CancelReason::Shutdown) | None => {
                // Checkpoint: everything so far is stored; resume at the next start.
                rt.store
                    .update_run_usage(
                        run_id,
                        progress.steps as i64,
                        progress.usage.input_tokens as i64,
                        progress.usage.output_tokens as i64,
                    )
                    .await?;
                rt.store.requeue_run(run_id).await?;
                tracing::info!(
                    run_id,
                    "run interrupted by shutdown; it resumes at the next start"
                );
                rt.emit_run_ended(&run.session_key, json!({"type": "run.ended", "runId": run_id, "sessionKey": run.session_key, "status": "interrupted", "claimed": progress.claimed}));
                return Ok(None);
            }
            Some(_) => {
                finish(
                    rt,
                    &run,
                    RunStatus::Cancelled,
                    Some("stopped".into()),
                    &progress,
                    Some(&model),
                    None,
                )
                .await?
            }
        },
        Some(None) => {
            let limit = run_timeout.unwrap_or_default();
            let msg = format!(
                "the run timed out after {}",
                humantime::format_duration(limit)
            );
            finish(
                rt,
                &run,
                RunStatus::Timeout,
                Some(msg.clone()),
                &progress,
                Some(&model),
                Some(format!("⚠️ {msg}")),
            )
            .await?
        }
        Some(Some(LoopEnd::Final(text))) => {
            let deliver = (!text.trim().is_empty()).then(|| text.clone());
            finish_with_reply(rt, &run, &session.id, &progress, &model, text, deliver).await?
        }
        Some(Some(LoopEnd::StepLimit(n))) => {
            let msg = format!("stopped after {n} model calls (agents.defaults.maxSteps)");
            finish(
                rt,
                &run,
                RunStatus::Failed,
                Some(msg.clone()),
                &progress,
                Some(&model),
                Some(format!("⚠️ {msg}")),
            )
            .await?
        }
        Some(Some(LoopEnd::Provider(e))) => {
            let msg = e.to_string();
            finish(
                rt,
                &run,
                RunStatus::Failed,
                Some(msg.clone()),
                &progress,
                Some(&model),
                Some(format!("⚠️ The model call failed: {msg}")),
            )
            .await?
        }
        Some(Some(LoopEnd::Fatal(msg))) => {
            finish(
                rt,
                &run,
                RunStatus::Failed,
                Some(msg.clone()),
                &progress,
                Some(&model),
                Some(format!("⚠️ The run failed: {msg}")),
            )
            .await?
        }
        Some(Some(LoopEnd::Store(e))) => return Err(e),
    };
    Ok(Some((run, finished)))
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

async fn finish(
    rt: &Runtime,
    run: &RunRow,
    status: RunStatus,
    error: Option<String>,
    progress: &Progress,
    model: Option<&ResolvedModel>,
    deliver: Option<String>,
) -> Result<RunFinished, StoreError> {
    let end = RunEnd {
        error,
        deliver,
        ..progress_end(status, progress, model)
    };
    end_run(rt, run, end, progress, None).await
}

async fn finish_with_reply(
    rt: &Runtime,
    run: &RunRow,
    session_id: &str,
    progress: &Progress,
    model: &ResolvedModel,
    reply: String,
    deliver: Option<String>,
) -> Result<RunFinished, StoreError> {
    let last = NewMessage::assistant(reply.clone(), Vec::new());
    let end = RunEnd {
        reply: Some(reply),
        deliver,
        ..progress_end(RunStatus::Succeeded, progress, Some(model))
    };
    end_run(rt, run, end, progress, Some((session_id, &last))).await
}

/// A run's end with the steps, usage and cost it got to (no error, reply or delivery yet).
fn progress_end(status: RunStatus, progress: &Progress, model: Option<&ResolvedModel>) -> RunEnd {
    let (input, output) = (progress.usage.input_tokens, progress.usage.output_tokens);
    RunEnd {
        model: model.map(|m| m.reference.clone()),
        steps: progress.steps as i64,
        input_tokens: input as i64,
        output_tokens: output as i64,
        cost_usd: models::estimate_cost(model.and_then(|m| m.cost), input, output),
        ..RunEnd::bare(status, None)
    }
}

/// End the run; `last`, its final answer (and the session it belongs to), is stored in the
/// same transaction.
async fn end_run(
    rt: &Runtime,
    run: &RunRow,
    mut end: RunEnd,
    progress: &Progress,
    last: Option<(&str, &NewMessage)>,
) -> Result<RunFinished, StoreError> {
    if run.lane == crate::queue::SUBAGENT {
        end.archive_after_ms = crate::subagents::control::archive_after_ms(rt);
    }
    // An HTTP API caller reads the reply from the run (or its `wait` answer): there is
    // nothing to deliver, so no outbox row to write, claim and mark.
    if run
        .origin
        .as_ref()
        .is_some_and(|o| o.channel == crate::outbox::API_CHANNEL)
    {
        end.deliver = None;
    }
    let finished = rt.store.finish_run_with(&run.id, &end, last).await?;
    if end.deliver.is_some() {
        rt.outbox_wake.notify_one();
    }
    tracing::info!(run_id = %run.id, session = %run.session_key, status = end.status.as_str(), steps = end.steps, "run ended");
    rt.emit_run_ended(
        &run.session_key,
        json!({
            "type": "run.ended",
            "runId": run.id,
            "sessionKey": run.session_key,
            "status": end.status.as_str(),
            "error": end.error,
            "reply": end.reply,
            "claimed": progress.claimed,
        }),
    );
    Ok(finished)
}

struct LoopCtx<'a> {
    rt: &'a Arc<Runtime>,
    run: &'a RunRow,
    session_id: &'a str,
    cfg: &'a Config,
    agent: Option<&'a AgentEntry>,
    workspace: &'a std::path::Path,
    model: &'a ResolvedModel,
    system: String,
    tools: std::collections::BTreeMap<String, Arc<dyn Tool>>,
    is_subagent: bool,
    cancel: CancellationToken,
    origin: Option<switchboard_channels::Origin>,
}

async fn run_loop(
    ctx: &LoopCtx<'_>,
    mut rows: Vec<MessageRow>,
    progress: &mut Progress,
) -> LoopEnd {
    let specs = ctx.rt.tools.specs(&ctx.tools);
    let defaults = &ctx.cfg.agents.defaults;
    let policy = RetryPolicy::new(
        ctx.model.max_retries,
        Duration::from_secs(defaults.step_timeout_seconds.clamp(1, 1800)),
    );
    let steer = ctx.cfg.messages.queue.mode == QueueMode::Steer;
    let run_id = ctx.run.id.as_str();
    // A run resumed after a restart re-executes the calls that were waiting on an exec
    // approval (the request is found again by run id + call id, so it is not re-asked).
    match super::tools::approvals::resumable_calls(&ctx.rt.store, run_id, &rows).await {
        Ok(calls) => {
            if let Err(end) = run_calls(ctx, &calls, &mut rows).await {
                return end;
            }
        }
        Err(e) => return LoopEnd::Store(e),
    }
    loop {
        if progress.steps >= defaults.max_steps {
            return LoopEnd::StepLimit(progress.steps);
        }
        if steer && progress.steps > 0 {
            match ctx
                .rt
                .store
                .claim_inbox(&ctx.run.session_key, ctx.session_id, run_id, Claim::All)
                .await
            {
                Ok(items) if !items.is_empty() => {
                    progress.claimed.extend(items.iter().map(|i| i.id));
                    match ctx.rt.store.transcript(ctx.session_id).await {
                        Ok(r) => rows = r,
                        Err(e) => return LoopEnd::Store(e),
                    }
                }
                Ok(_) => {}
                Err(e) => return LoopEnd::Store(e),
            }
        }
        let req = ModelRequest {
            model: ctx.model.model_id.clone(),
            system: ctx.system.clone(),
            messages: transcript::to_chat(&rows),
            tools: specs.clone(),
            max_tokens: MAX_TOKENS,
        };
        progress.steps += 1;
        ctx.rt.emit(
            &ctx.run.session_key,
            json!({"type": "run.step", "runId": run_id, "step": progress.steps}),
        );
        let resp = complete_with_retry(ctx.model.provider.as_ref(), &req, policy, |n, e, d| {
            tracing::warn!(run_id, attempt = n, error = %e, delay = ?d, "model call failed; retrying");
        })
        .await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) => return LoopEnd::Provider(e),
        };
        progress.usage.input_tokens += resp.usage.input_tokens;
        progress.usage.output_tokens += resp.usage.output_tokens;
        if resp.tool_calls.is_empty() {
            // Stored with the run's end, in one transaction.
            return LoopEnd::Final(resp.text);
        }
        let msg = NewMessage::assistant(resp.text.clone(), resp.tool_calls.clone());
        if let Err(e) = append(ctx, &mut rows, msg).await {
            return LoopEnd::Store(e);
        }
        if let Err(e) = ctx
            .rt
            .store
            .update_run_usage(
                run_id,
                progress.steps as i64,
                progress.usage.input_tokens as i64,
                progress.usage.output_tokens as i64,
            )
            .await
        {
            return LoopEnd::Store(e);
        }
        if let Err(end) = run_calls(ctx, &resp.tool_calls, &mut rows).await {
            return end;
        }
    }
}

/// Execute `calls` in order, storing each result as it comes; a `run.tool` event after
/// each says how it went.
async fn run_calls(
    ctx: &LoopCtx<'_>,
    calls: &[ToolCallRecord],
    rows: &mut Vec<MessageRow>,
) -> Result<(), LoopEnd> {
    let run_id = ctx.run.id.as_str();
    for call in calls {
        let started = std::time::Instant::now();
        let outcome = call_tool(ctx, call).await;
        let error = match &outcome {
            Ok(_) => None,
            Err(e) => Some(e.to_string()),
        };
        ctx.rt.emit(
            &ctx.run.session_key,
            json!({"type": "run.tool", "runId": run_id, "tool": call.name, "callId": call.id,
                   "durationMs": started.elapsed().as_millis() as u64, "ok": error.is_none(), "error": error}),
        );
        let result = match outcome {
            Ok(text) => text,
            Err(ToolError::Model(msg)) => format!("error: {msg}"),
            Err(ToolError::Fatal(msg)) => {
                return Err(LoopEnd::Fatal(format!(
                    "tool `{}` failed: {msg}",
                    call.name
                )))
            }
        };
        let result: String = if result.len() > MAX_TOOL_RESULT {
            let cut: String = result.chars().take(MAX_TOOL_RESULT).collect();
            format!("{cut}\n…(truncated)")
        } else {
            result
        };
        if let Err(e) = append(ctx, rows, NewMessage::tool(call, result)).await {
            return Err(LoopEnd::Store(e));
        }
    }
    Ok(())
}

/// Store a message and keep the in-memory transcript in step.
async fn append(
    ctx: &LoopCtx<'_>,
    rows: &mut Vec<MessageRow>,
    m: NewMessage,
) -> Result<(), StoreError> {
    let seq = ctx
        .rt
        .store
        .append_message(ctx.session_id, Some(&ctx.run.id), &m)
        .await?;
    rows.push(MessageRow {
        seq,
        session_id: ctx.session_id.to_string(),
        run_id: Some(ctx.run.id.clone()),
        role: m.role,
        content: m.content,
        tool_calls: m.tool_calls,
        tool_call_id: m.tool_call_id,
        tool_name: m.tool_name,
        created_at: crate::store::now_ms(),
    });
    Ok(())
}

/// Execute one tool call (see `tools::dispatch`).
async fn call_tool(ctx: &LoopCtx<'_>, call: &ToolCallRecord) -> Result<String, ToolError> {
    let tctx = ToolContext {
        origin: ctx.origin.as_ref(),
        rt: ctx.rt,
        cfg: ctx.cfg,
        agent: ctx.agent,
        workspace: ctx.workspace,
        session_key: &ctx.run.session_key,
        agent_id: &ctx.run.agent_id,
        run_id: &ctx.run.id,
        call_id: &call.id,
        is_subagent: ctx.is_subagent,
        cancel: ctx.cancel.child_token(),
    };
    super::tools::dispatch(&ctx.tools, call, &tctx).await
}

/// Convert the transcript for inspection (used by commands and the API).
pub fn chat_view(rows: &[MessageRow]) -> Vec<ChatMessage> {
    transcript::to_chat(rows)
}
