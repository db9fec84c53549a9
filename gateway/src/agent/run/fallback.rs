//! One step's model call along the run's model chain: the primary, then each fallback
//! while the ones before it are in an outage (`agent::outages`). The same request (the
//! same transcript) goes to the next model, so the transcript stays one conversation;
//! the chat is told once per outage, and told when the model answers again.

use std::time::Duration;

use switchboard_channels::Origin;

use super::steps::{model_call, LoopCtx};
use crate::agent::models::ResolvedModel;
use crate::agent::outages::{Outages, Tell};
use crate::agent::provider::{ModelRequest, ModelResponse, ProviderError, RetryPolicy};

/// A step's answer and the model that gave it.
pub(super) struct Served<'m> {
    pub(super) resp: ModelResponse,
    pub(super) model: &'m ResolvedModel,
}

/// Call the run's models in chain order for `req` (built for the primary; its
/// `reasoning` belongs to `reasoning_from` and goes only to that model). A model passed
/// over for its cool-down is skipped, but the last one is always tried.
pub(super) async fn call<'m>(
    ctx: &LoopCtx<'m>,
    req: &ModelRequest,
    reasoning_from: Option<&str>,
    origin: Option<&Origin>,
    step: u32,
) -> Result<Served<'m>, ProviderError> {
    let chain: Vec<&'m ResolvedModel> = std::iter::once(ctx.model)
        .chain(ctx.model.fallbacks.iter())
        .collect();
    let step_timeout =
        Duration::from_secs(ctx.cfg.agents.defaults.step_timeout_seconds.clamp(1, 1800));
    let cooldown = ctx.cfg.models.outage_cooldown;
    let outages = ctx.rt.parts.get::<Outages>();
    let session = ctx.run.session_key.as_str();
    let last = chain.len() - 1;
    let mut i = 0;
    loop {
        let model = chain[i];
        let now = tokio::time::Instant::now();
        if i < last && outages.passed_over(&model.reference, now) {
            if let Some(reason) = outages.passed_by(&model.reference, session) {
                let text = failing(&model.reference, &reason, &chain[i + 1].reference);
                tell(ctx, origin, step, &model.reference, "failing", &text).await;
            }
            i += 1;
            continue;
        }
        // A model back from its cool-down is probed once: no retries.
        let retries = if outages.is_down(&model.reference) {
            0
        } else {
            model.max_retries
        };
        let policy = RetryPolicy::new(retries, step_timeout);
        let req = for_model(req, model, reasoning_from);
        match model_call(ctx, model.provider.as_ref(), &req, policy).await {
            Ok(resp) => {
                if outages.answered(&model.reference, session) == Tell::Recovered {
                    let text = format!("{} is answering again.", model.reference);
                    tell(ctx, origin, step, &model.reference, "recovered", &text).await;
                }
                return Ok(Served { resp, model });
            }
            Err(e) if e.is_outage() && chain.len() > 1 => {
                tracing::warn!(run_id = %ctx.run.id, model = %model.reference, error = %e, "model outage");
                let told = outages.failed(&model.reference, &e.brief(), session, cooldown, now);
                let next = chain[i + 1..]
                    .iter()
                    .find(|m| !outages.passed_over(&m.reference, now))
                    .or(chain[i + 1..].last());
                let (Some(next), true) = (next, i < last) else {
                    return Err(e);
                };
                if told == Tell::Failing {
                    let text = failing(&model.reference, &e.brief(), &next.reference);
                    tell(ctx, origin, step, &model.reference, "failing", &text).await;
                }
                i += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// The model the next call is expected to reach: the first of the chain not passed over
/// for an outage's cool-down (the last one is always tried). Its window is the one the
/// request is fitted to.
pub(super) fn expected<'m>(ctx: &LoopCtx<'m>) -> &'m ResolvedModel {
    let now = tokio::time::Instant::now();
    let outages = ctx.rt.parts.get::<Outages>();
    let chain: Vec<&'m ResolvedModel> = std::iter::once(ctx.model)
        .chain(ctx.model.fallbacks.iter())
        .collect();
    chain
        .iter()
        .copied()
        .find(|m| !outages.passed_over(&m.reference, now))
        .or(chain.last().copied())
        .unwrap_or(ctx.model)
}

/// The chat's notice of an outage.
fn failing(model: &str, reason: &str, next: &str) -> String {
    format!("{model} is failing ({reason}); answering with {next} until it recovers.")
}

/// `req` for `model`: its id, answer limit and reasoning flag; the reasoning blocks only
/// if they came from it (a provider refuses another model's signed thinking).
fn for_model(
    req: &ModelRequest,
    model: &ResolvedModel,
    reasoning_from: Option<&str>,
) -> ModelRequest {
    let mut req = req.clone();
    req.model = model.model_id.clone();
    req.max_tokens = model.max_tokens;
    req.reasoning_model = model.reasoning_model;
    if reasoning_from != Some(model.reference.as_str()) {
        req.reasoning.clear();
    }
    req
}

/// Post `text` to the run's chat through the outbox (a sub-agent's run and an HTTP API
/// caller have no chat to tell: nothing is posted). A store error is logged: the turn goes on.
async fn tell(
    ctx: &LoopCtx<'_>,
    origin: Option<&Origin>,
    step: u32,
    reference: &str,
    what: &str,
    text: &str,
) {
    let Some(origin) = origin.filter(|o| !ctx.is_subagent && crate::outbox::is_chat(o)) else {
        return;
    };
    let key = format!("model-{what}:{}:{step}:{reference}", ctx.run.id);
    match ctx.rt.store.enqueue_outbox(&key, origin, text).await {
        Ok(_) => ctx.rt.tasks.outbox_wake.notify_one(),
        Err(e) => {
            tracing::warn!(run_id = %ctx.run.id, error = %e, "could not post the model notice")
        }
    }
}
