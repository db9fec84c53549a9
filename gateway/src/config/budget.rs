//! `agents.defaults.budget`: the most the runs of one day may cost (docs/usage.md). The
//! day is the UTC day; spending is read back from the stored runs, so it survives a
//! restart and counts every process of a shared database.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{Issue, KeyPath};
use super::Config;

/// Largest daily budget accepted, in USD (a guard against a typo of many zeros).
pub const MAX_DAILY_USD: f64 = 1_000_000.0;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct BudgetConfig {
    /// The most, in USD, that every agent's runs together may cost in one UTC day (from
    /// the models' `cost` prices). Once the day's runs reach it, new runs are refused with
    /// a message to the chat until the next UTC day. Unset: no budget.
    pub daily_usd: Option<f64>,
}

/// `agents.defaults.budget.dailyUsd` must be a positive amount.
pub(super) fn check(config: &Config, out: &mut Vec<Issue>) {
    if let Some(usd) = config.agents.defaults.budget.daily_usd {
        if !(usd > 0.0 && usd <= MAX_DAILY_USD) {
            out.push(Issue::new(
                KeyPath::dotted("agents.defaults.budget.dailyUsd"),
                format!("must be more than 0 and at most {MAX_DAILY_USD}, got {usd}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    fn issues(v: serde_json::Value) -> Vec<String> {
        match super::super::parse_config(&v.to_string(), &|_| None) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.into_iter().map(|e| e.path).collect(),
        }
    }

    /// Catches: a zero, negative or absurd budget accepted (every run refused, or none).
    #[test]
    fn the_daily_budget_must_be_positive() {
        let with =
            |usd: f64| serde_json::json!({"agents": {"defaults": {"budget": {"dailyUsd": usd}}}});
        assert!(issues(with(2.5)).is_empty());
        assert!(issues(serde_json::json!({})).is_empty());
        for bad in [0.0, -1.0, 2e6] {
            assert_eq!(
                issues(with(bad)),
                ["agents.defaults.budget.dailyUsd"],
                "{bad}"
            );
        }
    }
}
