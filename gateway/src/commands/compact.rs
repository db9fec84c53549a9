//! `/compact [focus]`: summarize this chat's older turns now (docs/context.md), as a run
//! does by itself past `session.compaction.threshold`, and say what it did. Everything but
//! the newest turn is summarized (with `focus`, the summary dwells on that). Not while a
//! run of the session is active: that run compacts by itself when it needs to.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::context::compact::{self, CompactError, Summarizer};
use crate::agent::context::Window;
use crate::agent::models::{ModelError, ResolvedModel};
use crate::agent::provider::RetryPolicy;
use crate::runtime::Runtime;
use crate::store::StoreError;

/// Longest focus text taken, in bytes.
pub const MAX_FOCUS: usize = 500;

/// Room kept for the summary's own answer, in tokens.
const SUMMARY_REPLY_TOKENS: u32 = 4096;

/// The model a run of this session would call now (its `/model` choice included): the
/// run's own resolution (`agent::run::Setup`), so `/compact` summarizes with that model.
async fn session_model(
    rt: &Runtime,
    agent_id: &str,
    session_key: &str,
) -> Result<Result<ResolvedModel, ModelError>, StoreError> {
    let choices = rt.store.session_choices(session_key).await?;
    Ok(crate::agent::run::Setup::new(rt, agent_id, None, &choices).into_model())
}

/// "52k", "1.2k", "850".
fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1000..=9_999 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{}k", (n + 500) / 1000),
    }
}

pub async fn execute(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
    focus: Option<&str>,
) -> Result<String, StoreError> {
    if rt.active_run(session_key).is_some() {
        return Ok("A run of this chat is in progress; send /compact once it has ended (a run compacts by itself when the conversation nears the model's window).".into());
    }
    let Some(session) = rt.store.active_session(session_key).await? else {
        return Ok("Nothing to compact: this chat has no conversation yet.".into());
    };
    let cfg = rt.config();
    let model = match session_model(rt, agent_id, session_key).await? {
        Ok(m) => m,
        Err(e) => return Ok(format!("⚠️ Cannot compact: {e}")),
    };
    let rows = rt.store.transcript(&session.id).await?;
    let summary = rt.store.latest_compaction(&session.id).await?;
    let window = Window::new(
        &cfg,
        &model.reference,
        SUMMARY_REPLY_TOKENS,
        "",
        &[],
        summary,
    );
    let Some(span) = compact::plan(&rows, window.summary.as_ref(), 0) else {
        return Ok("Nothing to compact yet: the conversation is only its newest turn.".into());
    };
    let step = Duration::from_secs(cfg.agents.defaults.step_timeout_seconds.clamp(1, 1800));
    let who = Summarizer {
        provider: model.provider.as_ref(),
        model_id: &model.model_id,
        policy: RetryPolicy::new(model.max_retries, step),
        max_tokens: window.reserve as u32,
        budget: window.summary_budget(),
        estimator: window.estimator,
        reasoning_model: model.reasoning_model,
    };
    let done = compact::compact(
        &rt.store,
        &session.id,
        &rows,
        window.summary.as_ref(),
        span,
        &who,
        focus,
    );
    let done = tokio::select! {
        r = done => r,
        _ = rt.tasks.shutdown.cancelled() => return Ok("Not compacted: the gateway is shutting down.".into()),
    };
    Ok(match done {
        Ok(r) => format!(
            "Compacted {} message{} (≈{} tokens) into a summary of ≈{} tokens.",
            r.messages,
            if r.messages == 1 { "" } else { "s" },
            tokens(r.tokens_before),
            tokens(r.tokens_after)
        ),
        Err(CompactError::Store(e)) => return Err(e),
        Err(e) => format!("⚠️ Not compacted: {e}. The conversation is unchanged."),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn token_counts_read_short() {
        assert_eq!(super::tokens(850), "850");
        assert_eq!(super::tokens(1234), "1.2k");
        assert_eq!(super::tokens(52_400), "52k");
    }
}
