//! Fitting a request to its model's context window (docs/context.md), pure: old tool
//! results are trimmed first (the current turn's last), and only when that is not enough
//! are the oldest turns left out, whole. Messages are in `transcript::to_chat`'s form, where
//! every tool result follows the call it answers, so a cut before a user message never
//! parts a call from its result.

use super::estimate::{self, Estimator};
use crate::agent::provider::ChatMessage;
use crate::store::Role;

/// How much of a trimmed tool result is kept, in bytes.
pub const TRIMMED_HEAD: usize = 200;

/// The prompt's limits, in (scaled) tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Where trimming old tool results stops (the compaction threshold): past it after
    /// trimming, the caller compacts.
    pub soft: u64,
    /// What the prompt may never pass (the window less the reply's room).
    pub hard: u64,
}

/// A fitted request.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub messages: Vec<ChatMessage>,
    /// The prompt's estimate (system and tools included), scaled.
    pub tokens: u64,
    /// The same by the unscaled rule (what calibration compares with the provider's figure).
    pub raw: u64,
    /// Tool results trimmed.
    pub trimmed: usize,
    /// Messages left out (oldest turns).
    pub dropped: usize,
}

/// What a trimmed tool result reads.
pub fn trimmed_text(content: &str) -> String {
    format!(
        "[tool result trimmed to fit the context window: {} bytes, the first {} kept]\n{}",
        content.len(),
        TRIMMED_HEAD,
        crate::text::head(content, TRIMMED_HEAD)
    )
}

fn is_trimmed(content: &str) -> bool {
    content.starts_with("[tool result trimmed to fit the context window:")
}

/// Fits `messages` under `limits`; `fixed_raw` is what the system prompt and the tools
/// weigh by the rule.
pub fn fit(
    mut messages: Vec<ChatMessage>,
    fixed_raw: u64,
    est: &Estimator,
    limits: Limits,
) -> Fitted {
    let mut costs: Vec<u64> = messages.iter().map(estimate::of_message).collect();
    let mut raw = fixed_raw + costs.iter().sum::<u64>();
    let mut trimmed = 0;
    let last_user = messages.iter().rposition(|m| m.role == Role::User);
    let last_tool = messages.iter().rposition(|m| m.role == Role::Tool);
    // 1. Old tool results (before the current turn), oldest first, down to the soft limit.
    // 2. Past the hard limit: every tool result but the very last.
    for (limit, end) in [
        (limits.soft, last_user.unwrap_or(0)),
        (limits.hard, last_tool.unwrap_or(0)),
    ] {
        for i in 0..end {
            if est.scaled(raw) <= limit {
                break;
            }
            let m = &mut messages[i];
            if m.role != Role::Tool
                || is_trimmed(&m.content)
                || m.content.len() <= TRIMMED_HEAD + 80
            {
                continue;
            }
            m.content = trimmed_text(&m.content);
            let cost = estimate::of_message(m);
            raw = raw - costs[i] + cost;
            costs[i] = cost;
            trimmed += 1;
        }
    }
    // 3. Still past the hard limit: leave out the oldest turns, cutting only before a
    // user message and never past the last one.
    let mut dropped = 0;
    if let (true, Some(last_user)) = (est.scaled(raw) > limits.hard, last_user) {
        let mut prefix = 0;
        let mut cut = 0;
        for i in 0..=last_user {
            if i > 0 && messages[i].role == Role::User {
                cut = i;
                if est.scaled(raw - prefix) <= limits.hard {
                    break;
                }
            }
            prefix += costs[i];
        }
        if cut > 0 {
            raw -= costs[..cut].iter().sum::<u64>();
            messages.drain(..cut);
            dropped = cut;
        }
    }
    Fitted {
        tokens: est.scaled(raw),
        raw,
        messages,
        trimmed,
        dropped,
    }
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
