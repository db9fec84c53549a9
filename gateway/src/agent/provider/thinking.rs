//! What each model API makes of a thinking level (OpenAI-compatible `reasoning_effort`,
//! Anthropic extended thinking with a token budget), and the reasoning blocks an answer
//! carries back.

pub use crate::config::thinking::{Thinking, UnknownThinking, THINKING_LEVELS};

/// Anthropic's smallest accepted `budget_tokens`.
pub const ANTHROPIC_MIN_BUDGET: u32 = 1024;

impl Thinking {
    /// OpenAI-compatible `reasoning_effort`: `low`, `medium` or `high` (the values every
    /// compatible server that reasons accepts; `minimal` is sent as `low`). `None` for
    /// `off`: the field is left out, as for a model that does not reason.
    pub fn reasoning_effort(self) -> Option<&'static str> {
        match self {
            Thinking::Off => None,
            Thinking::Minimal | Thinking::Low => Some("low"),
            Thinking::Medium => Some("medium"),
            Thinking::High => Some("high"),
        }
    }

    /// Anthropic extended thinking's `budget_tokens`; `None` for `off`. The answer's own
    /// `max_tokens` is added on top, so thinking never eats the answer's room.
    pub fn anthropic_budget(self) -> Option<u32> {
        match self {
            Thinking::Off => None,
            Thinking::Minimal => Some(ANTHROPIC_MIN_BUDGET),
            Thinking::Low => Some(2048),
            Thinking::Medium => Some(8192),
            Thinking::High => Some(24_576),
        }
    }
}

/// Whether `model_id` names an OpenAI reasoning model (the o1, o3, o4 and gpt-5
/// families), which take `max_completion_tokens` and refuse `max_tokens`. A gateway's
/// `vendor/model` id is judged by its last part. A model entry's `reasoning` overrides it.
pub fn is_reasoning_model(model_id: &str) -> bool {
    let id = model_id.rsplit('/').next().unwrap_or(model_id);
    let id = id.to_ascii_lowercase();
    let family = |f: &str| {
        id.strip_prefix(f)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', '_']))
    };
    ["o1", "o3", "o4", "gpt-5"].iter().any(|f| family(f))
}

/// A reasoning block of an answer that must go back to the provider unchanged with the
/// tool results it led to (Anthropic refuses a tool-use continuation whose assistant
/// message lost its thinking). Kept in memory for the run's tool loop only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReasoningBlock {
    Thinking { thinking: String, signature: String },
    Redacted { data: String },
}

impl ReasoningBlock {
    /// Bytes it weighs against the answer's budget.
    pub fn weight(&self) -> usize {
        match self {
            ReasoningBlock::Thinking {
                thinking,
                signature,
            } => thinking.len() + signature.len(),
            ReasoningBlock::Redacted { data } => data.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a reasoning family missed (the API refuses `max_tokens`) or an ordinary
    /// model taken for one (`o1`-looking prefixes of other names).
    #[test]
    fn reasoning_families_are_told_by_id() {
        for id in [
            "o1",
            "o1-mini",
            "o3-mini-2025-01-31",
            "o4-mini",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5.1",
            "openai/o3",
            "GPT-5-nano",
        ] {
            assert!(is_reasoning_model(id), "{id}");
        }
        for id in [
            "gpt-4o",
            "gpt-4.1-mini",
            "o1x",
            "gpt-50",
            "omni",
            "llama3",
            "claude-o1",
        ] {
            assert!(!is_reasoning_model(id), "{id}");
        }
    }

    /// Catches: a level mapped past the APIs' accepted values.
    #[test]
    fn levels_map_to_the_apis() {
        let table = [
            ("off", Thinking::Off, None, None),
            ("Minimal", Thinking::Minimal, Some("low"), Some(1024)),
            ("low", Thinking::Low, Some("low"), Some(2048)),
            ("MEDIUM", Thinking::Medium, Some("medium"), Some(8192)),
            (" high ", Thinking::High, Some("high"), Some(24_576)),
        ];
        for (text, level, effort, budget) in table {
            let parsed: Thinking = text.parse().expect(text);
            assert_eq!(
                (parsed, parsed.reasoning_effort(), parsed.anthropic_budget()),
                (level, effort, budget)
            );
        }
        for level in [Thinking::Minimal, Thinking::High] {
            assert!(level.anthropic_budget() >= Some(ANTHROPIC_MIN_BUDGET));
        }
    }
}
