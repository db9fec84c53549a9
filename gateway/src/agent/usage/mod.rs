//! Knowing the cost: what `/usage` and `/status` say about tokens, dollars and how full
//! the model's context window is, the daily budget (`agents.defaults.budget.dailyUsd`)
//! that refuses new runs once the day's runs have spent it, and the model series of
//! `/metrics` (`metrics`). Everything but the metrics is read back from the stored runs,
//! so it survives restarts and counts every process of a shared database. Days are UTC.

pub mod metrics;

use crate::config::Config;
use crate::store::{now_ms, Store, StoreError, UsageTotals};

pub use metrics::ModelMetrics;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The start of the UTC day of `ms` (milliseconds since the epoch).
pub fn day_start(ms: i64) -> i64 {
    ms - ms.rem_euclid(DAY_MS)
}

/// `n` with thousands separated: `12,345`.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// A cost in USD, or what is known of it.
pub fn dollars(cost: Option<f64>) -> String {
    match cost {
        Some(c) if c >= 0.01 => format!("${c:.2}"),
        Some(c) => format!("${c:.4}"),
        None => "unknown (no price for the model)".into(),
    }
}

/// How full the context window was at the last request: `prompt` tokens of `window`.
pub fn context_fill(prompt: Option<i64>, window: Option<u32>) -> String {
    match (prompt, window) {
        (None, _) => "no model call yet".into(),
        (Some(p), Some(w)) if w > 0 => format!(
            "{} of {} tokens ({}%)",
            count(p),
            count(i64::from(w)),
            (p as f64 * 100.0 / f64::from(w)).round()
        ),
        (Some(p), _) => format!("{} tokens (unknown window)", count(p)),
    }
}

/// The message new runs get once the day's budget is spent, or `None` while it is not
/// (or there is no budget).
pub async fn over_budget(store: &Store, cfg: &Config) -> Result<Option<String>, StoreError> {
    let Some(limit) = cfg.agents.defaults.budget.daily_usd else {
        return Ok(None);
    };
    let spent = store
        .usage_since(None, day_start(now_ms()))
        .await?
        .cost_usd
        .unwrap_or(0.0);
    Ok((spent >= limit).then(|| budget_message(spent, limit)))
}

/// What a refused run says to its chat.
pub fn budget_message(spent: f64, limit: f64) -> String {
    format!(
        "⚠️ Today's budget is spent: {} of {} (agents.defaults.budget.dailyUsd). No new runs until 00:00 UTC.",
        dollars(Some(spent)),
        dollars(Some(limit))
    )
}

/// One line of totals: `1,234 in / 56 out, $0.01 (3 runs)`.
pub fn totals_line(t: &UsageTotals) -> String {
    format!(
        "{} in / {} out tokens, {} ({} runs)",
        count(t.input_tokens),
        count(t.output_tokens),
        match t.cost_usd {
            Some(_) => dollars(t.cost_usd),
            None if t.runs == 0 => "$0".into(),
            None => "cost unknown".into(),
        },
        t.runs
    )
}

/// The session's cost per serving model: `Models: backup/m2 $0.12 (1 run); main/m1 $0
/// (2 runs)` (a fallback that answered during an outage is charged at its own price).
pub fn models_line(by_model: &[(String, UsageTotals)]) -> String {
    if by_model.is_empty() {
        return "Models: none yet".into();
    }
    let parts: Vec<String> = by_model
        .iter()
        .map(|(model, t)| {
            let cost = match t.cost_usd {
                Some(_) => dollars(t.cost_usd),
                None => "cost unknown".into(),
            };
            let runs = if t.runs == 1 { "run" } else { "runs" };
            format!("{model} {cost} ({} {runs})", t.runs)
        })
        .collect();
    format!("Models: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(dollars(Some(1.234)), "$1.23");
        assert_eq!(dollars(Some(0.00123)), "$0.0012");
        assert_eq!(
            context_fill(Some(1500), Some(3000)),
            "1,500 of 3,000 tokens (50%)"
        );
        assert_eq!(context_fill(Some(15), None), "15 tokens (unknown window)");
        assert_eq!(context_fill(None, Some(10)), "no model call yet");
        assert_eq!(day_start(DAY_MS * 3 + 5), DAY_MS * 3);
        let t = |runs, cost_usd| UsageTotals {
            runs,
            cost_usd,
            ..UsageTotals::default()
        };
        assert_eq!(
            models_line(&[
                ("b/m2".into(), t(1, Some(0.5))),
                ("a/m1".into(), t(2, None))
            ]),
            "Models: b/m2 $0.50 (1 run); a/m1 cost unknown (2 runs)"
        );
        assert_eq!(models_line(&[]), "Models: none yet");
    }
}
