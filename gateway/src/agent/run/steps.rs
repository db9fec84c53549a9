//! The steps of a run's loop: model call, tool calls, every message stored as it happens.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use switchboard_channels::Origin;
use tokio_util::sync::CancellationToken;

use super::fitting;
use super::stream::{Deltas, FLUSH_EVERY};
use super::Progress;
use crate::agent::context::Window;
use crate::agent::models::ResolvedModel;
use crate::agent::provider::{
    complete_with_retry_streaming, ModelRequest, ProviderError, RetryPolicy, Thinking,
};
use crate::agent::tools::{Tool, ToolContext, ToolError, ToolRegistry};
use crate::config::{AgentEntry, Config, QueueMode};
use crate::events::{Event, ToolFinished};
use crate::runtime::Runtime;
use crate::store::{CallUsage, Claim, MessageRow, NewMessage, RunRow, StoreError, ToolCallRecord};

/// Most characters of one tool result kept in the transcript.
const MAX_TOOL_RESULT: usize = 64 * 1024;

/// How the loop ended.
pub(super) enum LoopEnd {
    /// The model's final answer, not yet stored.
    Final(String),
    StepLimit(u32),
    Provider(ProviderError),
    Fatal(String),
    Store(StoreError),
}

pub(super) struct LoopCtx<'a> {
    pub(super) rt: &'a Arc<Runtime>,
    pub(super) run: &'a RunRow,
    pub(super) session_id: &'a str,
    pub(super) cfg: &'a Config,
    pub(super) agent: Option<&'a AgentEntry>,
    pub(super) workspace: &'a std::path::Path,
    pub(super) model: &'a ResolvedModel,
    pub(super) system: String,
    pub(super) tools: BTreeMap<String, Arc<dyn Tool>>,
    pub(super) is_subagent: bool,
    /// Most model calls of this run (the agent definition's `maxSteps`, else the default).
    pub(super) max_steps: u32,
    /// The thinking level of the run's model calls (see `run::thinking_of`).
    pub(super) thinking: Option<Thinking>,
    pub(super) cancel: CancellationToken,
}

pub(super) async fn run_loop(
    ctx: &LoopCtx<'_>,
    mut rows: Vec<MessageRow>,
    progress: &mut Progress,
) -> LoopEnd {
    let specs = ctx.rt.parts.get::<ToolRegistry>().specs(&ctx.tools);
    // The retry policy of the summary calls compaction makes (the step's own calls take
    // theirs per model, along the fallback chain).
    let policy = RetryPolicy::new(
        ctx.model.max_retries,
        Duration::from_secs(ctx.cfg.agents.defaults.step_timeout_seconds.clamp(1, 1800)),
    );
    let steer = ctx.cfg.messages.queue.mode == QueueMode::Steer;
    let run_id = ctx.run.id.as_str();
    // The reasoning of the answer whose tool calls were just run: the next call sends it
    // back. In memory only: a resumed run's first step goes without it.
    let mut reasoning = Vec::new();
    // The model that gave them (only it gets them back).
    let mut reasoning_from: Option<String> = None;
    // A run resumed after a restart re-executes the calls that were waiting on an exec
    // approval (the request is found again by run id + call id, so it is not re-asked).
    // So are `task` calls whose child was created: the run waits for that child again.
    match resumable(ctx, &rows).await {
        Ok(calls) => {
            if let Err(end) =
                run_calls(ctx, &calls, &mut rows, progress.reply_origin.as_ref()).await
            {
                return end;
            }
        }
        Err(e) => return LoopEnd::Store(e),
    }
    // The context window this run's requests are fitted to, with the compaction in force.
    let mut window = match ctx.rt.store.latest_compaction(ctx.session_id).await {
        Ok(summary) => Window::new(
            ctx.cfg,
            &ctx.model.reference,
            ctx.model.max_tokens,
            &ctx.system,
            &specs,
            summary,
        ),
        Err(e) => return LoopEnd::Store(e),
    };
    loop {
        // A resumed run goes on counting from the steps it made before the restart.
        if progress.steps >= ctx.max_steps {
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
                    if let Some(last) = items.last() {
                        progress.reply_origin = Some(last.origin.clone());
                    }
                    match ctx.rt.store.transcript(ctx.session_id).await {
                        Ok(r) => rows = r,
                        Err(e) => return LoopEnd::Store(e),
                    }
                }
                Ok(_) => {}
                Err(e) => return LoopEnd::Store(e),
            }
        }
        // Fitted to the window of the model expected to serve (a fallback while the
        // models before it are passed over in an outage).
        let serving = super::fallback::expected(ctx);
        window.serve_with(ctx.cfg, &serving.reference, serving.max_tokens);
        let fitted = match fitting::fitted(ctx, &mut window, &rows, policy, false).await {
            Ok(f) => f,
            Err(end) => return end,
        };
        let mut raw = fitted.raw;
        let mut req = ModelRequest {
            model: ctx.model.model_id.clone(),
            system: ctx.system.clone(),
            messages: crate::agent::context::inline::attach(
                fitted.messages,
                ctx.workspace,
                ctx.cfg.media.images.turns,
                ctx.model.takes_images,
            )
            .await,
            tools: specs.clone(),
            max_tokens: ctx.model.max_tokens,
            thinking: ctx.thinking,
            reasoning: std::mem::take(&mut reasoning),
            reasoning_model: ctx.model.reasoning_model,
        };
        progress.steps += 1;
        ctx.rt.emit(Event::RunStep {
            session_key: ctx.run.session_key.clone(),
            run_id: ctx.run.id.clone(),
            step: progress.steps as u64,
        });
        let origin = progress.reply_origin.clone();
        let called = std::time::Instant::now();
        let mut served = super::fallback::call(
            ctx,
            &req,
            reasoning_from.as_deref(),
            origin.as_ref(),
            progress.steps,
        )
        .await;
        // Refused as too long all the same (the estimate is only an estimate): compact,
        // and try once more; a second refusal ends the run and the chat is told.
        if let Err(ProviderError::ContextTooLong(e)) = &served {
            tracing::warn!(run_id, error = %e, "the model refused the request as too long; compacting and retrying once");
            window.estimator.distrust();
            // The model that refused may be a fallback with a smaller window.
            let serving = super::fallback::expected(ctx);
            window.serve_with(ctx.cfg, &serving.reference, serving.max_tokens);
            match fitting::fitted(ctx, &mut window, &rows, policy, true).await {
                Ok(f) => {
                    raw = f.raw;
                    req.messages = crate::agent::context::inline::attach(
                        f.messages,
                        ctx.workspace,
                        ctx.cfg.media.images.turns,
                        ctx.model.takes_images,
                    )
                    .await;
                }
                Err(end) => return end,
            }
            served = super::fallback::call(
                ctx,
                &req,
                reasoning_from.as_deref(),
                origin.as_ref(),
                progress.steps,
            )
            .await;
        }
        // The step's time along the chain, counted for the model that answered.
        let metrics = ctx.rt.parts.get::<crate::agent::usage::ModelMetrics>();
        let (resp, served_by) = match served {
            Ok(s) => {
                metrics.observe_call(&s.model.reference, called.elapsed().as_secs_f64());
                (s.resp, s.model)
            }
            Err(e) => return LoopEnd::Provider(e),
        };
        window.estimator.calibrate(raw, resp.usage.input_tokens);
        progress.usage.input_tokens += resp.usage.input_tokens;
        progress.usage.output_tokens += resp.usage.output_tokens;
        let (input, output) = (resp.usage.input_tokens, resp.usage.output_tokens);
        let cost = crate::agent::models::estimate_cost(served_by.cost, input, output);
        metrics.add_usage(&served_by.reference, input, output, cost);
        // The call is charged at the price of the model that served it.
        if let Some(c) = cost {
            progress.cost_usd = Some(progress.cost_usd.unwrap_or(0.0) + c);
        }
        progress.served_by = Some(served_by.reference.clone());
        // How full the window was, and the cost so far: `/usage`, `/status` and the
        // daily budget read them back. A final answer's are stored with the run's end,
        // in its transaction.
        let context_tokens = input.min(i64::MAX as u64) as i64;
        progress.context_tokens = Some(context_tokens);
        if resp.tool_calls.is_empty() {
            // Stored with the run's end, in one transaction. A reply cut at the model's
            // limit says so: the run does not pass it off as complete.
            let text = if resp.cut {
                cut_notice(resp.text, served_by.max_tokens)
            } else {
                resp.text
            };
            return LoopEnd::Final(text);
        }
        reasoning_from = Some(served_by.reference.clone());
        // The call's usage and its answer, in one transaction: the tool calls run once
        // both are stored.
        let usage = CallUsage {
            steps: progress.steps as i64,
            input_tokens: progress.usage.input_tokens as i64,
            output_tokens: progress.usage.output_tokens as i64,
            context_tokens,
            cost_usd: progress.cost_usd,
        };
        reasoning = resp.reasoning;
        let msg = NewMessage::assistant(resp.text.clone(), resp.tool_calls.clone());
        let stored = ctx
            .rt
            .store
            .record_call_answer(run_id, ctx.session_id, &usage, &msg)
            .await;
        match stored {
            Ok(seq) => push(ctx, &mut rows, seq, msg),
            Err(e) => return LoopEnd::Store(e),
        }
        if let Err(end) = run_calls(
            ctx,
            &resp.tool_calls,
            &mut rows,
            progress.reply_origin.as_ref(),
        )
        .await
        {
            return end;
        }
    }
}

/// A reply cut at the model's `max_tokens`, with a line at its end that says so.
pub(crate) fn cut_notice(text: String, max_tokens: u32) -> String {
    let sep = if text.is_empty() || text.ends_with('\n') {
        ""
    } else {
        "\n\n"
    };
    format!("{text}{sep}… (the reply was cut at the model's {max_tokens}-token limit)")
}

/// One model call, its text streamed as `run.delta` events (not a sub-agent's: nobody
/// reads it as it is written); a timer sends on text held back while the model pauses.
pub(super) async fn model_call(
    ctx: &LoopCtx<'_>,
    provider: &dyn crate::agent::provider::Provider,
    req: &ModelRequest,
    policy: RetryPolicy,
) -> Result<crate::agent::provider::ModelResponse, ProviderError> {
    let run_id = ctx.run.id.as_str();
    let on_retry = |n, e: &ProviderError, d| {
        tracing::warn!(run_id, attempt = n, error = %e, delay = ?d, "model call failed; retrying");
    };
    if ctx.is_subagent {
        return complete_with_retry_streaming(provider, req, policy, on_retry, &mut |_, _| {})
            .await;
    }
    let deltas = parking_lot::Mutex::new(Deltas::new(ctx.rt, &ctx.run.session_key, run_id));
    let mut on_text = |fresh: bool, piece: &str| deltas.lock().push(fresh, piece);
    let call = complete_with_retry_streaming(provider, req, policy, on_retry, &mut on_text);
    if !ctx.rt.events.is_heard() {
        // Nobody listens now: no timer. A listener that joins during the call gets the
        // pieces as they come (held back at most until the next one) and the rest at its end.
        let resp = call.await;
        deltas.lock().flush();
        return resp;
    }
    tokio::pin!(call);
    let mut ticks = tokio::time::interval(FLUSH_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let resp = loop {
        tokio::select! {
            resp = &mut call => break resp,
            _ = ticks.tick() => deltas.lock().tick(),
        }
    };
    deltas.lock().flush();
    resp
}

/// The open calls of a resumed run that are executed again, in the order the model made
/// them: those waiting on an exec approval, and those their tool takes up again
/// (`Tool::resumable`: `task` calls whose child exists).
async fn resumable(
    ctx: &LoopCtx<'_>,
    rows: &[MessageRow],
) -> Result<Vec<ToolCallRecord>, StoreError> {
    let open = crate::agent::tools::approvals::open_calls(rows);
    let run_id = ctx.run.id.as_str();
    let approvals =
        crate::agent::tools::approvals::resumable_calls(&ctx.rt.store, run_id, &open).await?;
    let mut tasks = Vec::new();
    let names: std::collections::BTreeSet<&str> = open.iter().map(|c| c.name.as_str()).collect();
    for name in names {
        if let Some(tool) = ctx.tools.get(name) {
            let calls: Vec<ToolCallRecord> =
                open.iter().filter(|c| c.name == name).cloned().collect();
            tasks.extend(tool.resumable(&ctx.rt.store, run_id, &calls).await?);
        }
    }
    Ok(open
        .into_iter()
        .filter(|c| approvals.iter().chain(&tasks).any(|r| r.id == c.id))
        .collect())
}

/// Execute `calls` in order, storing each result as it comes; a `run.tool` event after
/// each says how it went. Consecutive `task` calls (each waits for a child run to its
/// end, independently) run concurrently; their results are stored in the model's order.
async fn run_calls(
    ctx: &LoopCtx<'_>,
    calls: &[ToolCallRecord],
    rows: &mut Vec<MessageRow>,
    origin: Option<&Origin>,
) -> Result<(), LoopEnd> {
    let mut rest = calls;
    while let Some(first) = rest.first() {
        let n = if ctx.tools.get(&first.name).is_some_and(|t| t.concurrent()) {
            rest.iter().take_while(|c| c.name == first.name).count()
        } else {
            1
        };
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        let outcomes =
            futures::future::join_all(batch.iter().map(|call| timed_call(ctx, call, origin))).await;
        for (call, outcome) in batch.iter().zip(outcomes) {
            store_result(ctx, call, outcome, rows).await?;
        }
    }
    Ok(())
}

/// One call, and its `run.tool` event.
async fn timed_call(
    ctx: &LoopCtx<'_>,
    call: &ToolCallRecord,
    origin: Option<&Origin>,
) -> Result<String, ToolError> {
    let started = std::time::Instant::now();
    let busy = super::heartbeat::busy();
    let outcome = call_tool(ctx, call, origin).await;
    drop(busy);
    ctx.rt
        .parts
        .get::<crate::latency::Latency>()
        .observe_tool(&call.name, started.elapsed());
    let error = match &outcome {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    };
    ctx.rt.emit(Event::RunTool(ToolFinished {
        session_key: ctx.run.session_key.clone(),
        run_id: ctx.run.id.clone(),
        tool: call.name.clone(),
        call_id: call.id.clone(),
        duration_ms: started.elapsed().as_millis() as u64,
        error,
    }));
    outcome
}

/// Store the result of `call` (a fatal tool error ends the loop).
async fn store_result(
    ctx: &LoopCtx<'_>,
    call: &ToolCallRecord,
    outcome: Result<String, ToolError>,
    rows: &mut Vec<MessageRow>,
) -> Result<(), LoopEnd> {
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
        let cut = crate::text::head(&result, MAX_TOOL_RESULT);
        format!("{cut}\n…(truncated)")
    } else {
        result
    };
    append(ctx, rows, NewMessage::tool(call, result))
        .await
        .map_err(LoopEnd::Store)
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
    push(ctx, rows, seq, m);
    Ok(())
}

/// `m`, stored as `seq`, at the end of the run's transcript in memory.
fn push(ctx: &LoopCtx<'_>, rows: &mut Vec<MessageRow>, seq: i64, m: NewMessage) {
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
}

/// Execute one tool call (see `tools::dispatch`: bad names and arguments are told to the
/// model).
async fn call_tool(
    ctx: &LoopCtx<'_>,
    call: &ToolCallRecord,
    origin: Option<&Origin>,
) -> Result<String, ToolError> {
    #[cfg(debug_assertions)]
    fault::maybe_panic(&call.name);
    let tctx = ToolContext {
        origin,
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
    crate::agent::tools::dispatch(&ctx.tools, call, &tctx).await
}

/// A fault hook for the end-to-end tests, compiled into debug builds only: with
/// `SWITCHBOARD_FAULT_INJECTION=1` in the daemon's environment, a model call of the tool
/// [`fault::PANIC_TOOL`] panics inside the run's task (as a bug in a provider, a tool or
/// the store glue would), so the tests can check that a panic never wedges a run.
///
/// Why here and like this: it needs no tool in the registry (nothing offers it to a
/// model, no config key), is absent from release builds, and the run's own code path is
/// the one that panics.
#[cfg(debug_assertions)]
mod fault {
    use std::sync::OnceLock;

    /// The tool name that panics when fault injection is on.
    pub const PANIC_TOOL: &str = "__fault_panic";

    pub(super) fn maybe_panic(tool: &str) {
        static ON: OnceLock<bool> = OnceLock::new();
        let on = *ON
            .get_or_init(|| std::env::var("SWITCHBOARD_FAULT_INJECTION").is_ok_and(|v| v == "1"));
        if on && tool == PANIC_TOOL {
            panic!("fault injection: the tool `{PANIC_TOOL}` panics");
        }
    }
}

#[cfg(test)]
mod tests {
    /// Catches: a cut reply delivered without saying so, or the notice glued to the text.
    #[test]
    fn a_cut_reply_says_so_at_its_end() {
        assert_eq!(
            super::cut_notice("The list goes on: one, two,".into(), 4096),
            "The list goes on: one, two,\n\n… (the reply was cut at the model's 4096-token limit)"
        );
        assert_eq!(
            super::cut_notice(String::new(), 10),
            "… (the reply was cut at the model's 10-token limit)"
        );
    }
}
