//! The run's side of context fitting (docs/context.md): before each model call the
//! request is fitted to the model's window, and past the compaction threshold the older
//! turns are summarized first. The summary is part of the run, on its session's lane, so
//! no other run of the session interleaves; a crash before it is committed leaves the
//! transcript as it was, and the resumed run compacts again.

use super::steps::{LoopCtx, LoopEnd};
use crate::agent::context::compact::{self, CompactError, Summarizer};
use crate::agent::context::fit::Fitted;
use crate::agent::context::Window;
use crate::agent::provider::RetryPolicy;
use crate::store::MessageRow;

/// `rows` as a fitted request, compacted first when it is past the threshold (or when
/// `force`d: the provider refused the last request as too long). A failed summary is
/// logged and the request goes fitted without it (it is never over the window).
pub(super) async fn fitted(
    ctx: &LoopCtx<'_>,
    window: &mut Window,
    rows: &[MessageRow],
    policy: RetryPolicy,
    force: bool,
) -> Result<Fitted, LoopEnd> {
    let fitted = window.fit(rows);
    if !force && !window.wants_compaction(&fitted) {
        return Ok(fitted);
    }
    // Refused as too long: everything but the current turn is summarized.
    let keep = if force { 0 } else { window.keep() };
    let Some(span) = compact::plan(rows, window.summary.as_ref(), keep) else {
        return Ok(fitted);
    };
    let who = Summarizer {
        provider: ctx.model.provider.as_ref(),
        model_id: &ctx.model.model_id,
        policy,
        max_tokens: window.reserve as u32,
        budget: window.summary_budget(),
        estimator: window.estimator,
        reasoning_model: ctx.model.reasoning_model,
    };
    let run_id = ctx.run.id.as_str();
    let done = compact::compact(
        &ctx.rt.store,
        ctx.session_id,
        rows,
        window.summary.as_ref(),
        span,
        &who,
        None,
    )
    .await;
    match done {
        Ok(report) => {
            tracing::info!(
                run_id,
                messages = report.messages,
                tokens_before = report.tokens_before,
                tokens_after = report.tokens_after,
                "the session's older turns were compacted"
            );
            window.summary = Some(report.row);
            Ok(window.fit(rows))
        }
        Err(CompactError::Store(e)) => Err(LoopEnd::Store(e)),
        Err(e) => {
            tracing::warn!(run_id, error = %e, "compaction failed; the request goes trimmed to the window");
            Ok(fitted)
        }
    }
}
