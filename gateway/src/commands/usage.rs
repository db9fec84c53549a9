//! `/usage`: this session's tokens, cost and context fill, and the day's totals; and the
//! lines `/status` adds about them. Read back from the stored runs (`agent::usage`).

use std::sync::Arc;

use crate::agent::usage;
use crate::config;
use crate::runtime::Runtime;
use crate::store::{now_ms, StoreError, UsageTotals};

/// What the session at `session_key` used: its totals and its latest prompt tokens.
async fn session_totals(
    rt: &Runtime,
    session_key: &str,
) -> Result<(UsageTotals, Option<i64>), StoreError> {
    match rt.store.active_session(session_key).await? {
        Some(s) => Ok((
            rt.store.session_usage(&s.key, &s.id).await?,
            rt.store.session_context_tokens(&s.key, &s.id).await?,
        )),
        None => Ok((UsageTotals::default(), None)),
    }
}

/// The context fill of the session's latest request against the model its next run
/// calls (its `/model` choice included: the run's own resolution, `agent::run::Setup`).
async fn fill(
    rt: &Runtime,
    cfg: &config::Config,
    agent_id: &str,
    session_key: &str,
    prompt: Option<i64>,
) -> Result<String, StoreError> {
    let choices = rt.store.session_choices(session_key).await?;
    let model = crate::agent::run::Setup::new(rt, agent_id, None, &choices)
        .into_model()
        .ok();
    // The window the run fits its requests to (a model without `contextWindow` has the
    // default one).
    let window = model.map(|m| crate::agent::context::window_of(cfg, &m.reference));
    Ok(usage::context_fill(prompt, window))
}

pub async fn usage(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
) -> Result<String, StoreError> {
    let cfg = rt.config();
    let (session, prompt) = session_totals(rt, session_key).await?;
    let since = usage::day_start(now_ms());
    let agent_today = rt.store.usage_since(Some(agent_id), since).await?;
    let by_model = match rt.store.active_session(session_key).await? {
        Some(s) => rt.store.session_usage_by_model(&s.key, &s.id).await?,
        None => Vec::new(),
    };
    let mut out = format!(
        "Session: {}\nCost: {}\nContext: {}\n{}\nToday (UTC), agent {agent_id}: {}",
        usage::totals_line(&session),
        match session.cost_usd {
            Some(_) => usage::dollars(session.cost_usd),
            None if session.runs == 0 => "$0".into(),
            None => usage::dollars(None),
        },
        fill(rt, &cfg, agent_id, session_key, prompt).await?,
        usage::models_line(&by_model),
        usage::totals_line(&agent_today),
    );
    if let Some(limit) = cfg.agents.defaults.budget.daily_usd {
        let all = rt.store.usage_since(None, since).await?;
        out.push_str(&format!(
            "\nBudget today (all agents): {} of {}",
            usage::dollars(Some(all.cost_usd.unwrap_or(0.0))),
            usage::dollars(Some(limit))
        ));
    }
    Ok(out)
}

/// The lines `/status` adds: the context fill and today's cost of the agent.
pub async fn status_lines(
    rt: &Arc<Runtime>,
    session_key: &str,
    agent_id: &str,
) -> Result<String, StoreError> {
    let cfg = rt.config();
    let (_, prompt) = session_totals(rt, session_key).await?;
    let today = rt
        .store
        .usage_since(Some(agent_id), usage::day_start(now_ms()))
        .await?;
    Ok(format!(
        "\nContext: {}\nToday's cost: {}",
        fill(rt, &cfg, agent_id, session_key, prompt).await?,
        match today.cost_usd {
            Some(_) => usage::dollars(today.cost_usd),
            None if today.runs == 0 => "$0".into(),
            None => usage::dollars(None),
        }
    ))
}
