//! Keeping a conversation inside its model's context window (docs/context.md): token
//! estimates (`estimate`), fitting a request (`fit`), what a run reads of its transcript
//! once compacted (`view`) and the compaction itself (`compact`). `Window` is one run's
//! state of it: the model's window, the reply's room, the calibrated estimator and the
//! compaction in force.

pub mod compact;
pub mod estimate;
pub mod fit;
pub mod inline;
pub mod view;

use crate::agent::provider::{ChatMessage, ToolSpec};
use crate::config::context::DEFAULT_CONTEXT_WINDOW;
use crate::config::Config;
use crate::store::{CompactionRow, MessageRow};
use estimate::Estimator;
use fit::{Fitted, Limits};

/// The context window of model `reference` (`provider/model`): its entry's
/// `contextWindow`, else [`DEFAULT_CONTEXT_WINDOW`].
pub fn window_of(cfg: &Config, reference: &str) -> u32 {
    reference
        .split_once('/')
        .and_then(|(p, m)| {
            cfg.models
                .providers
                .get(p)?
                .models
                .iter()
                .find(|e| e.id == m)?
                .context_window
        })
        .unwrap_or(DEFAULT_CONTEXT_WINDOW)
}

/// One run's context: the window it fits requests to and the compaction it reads.
#[derive(Debug, Clone)]
pub struct Window {
    /// The model's context window, in tokens.
    pub window: u64,
    /// Room kept for the reply (the request's `max_tokens`), never more than half the window.
    pub reserve: u64,
    /// `session.compaction.threshold` and `keepRecent`.
    pub threshold: f64,
    pub keep_recent: f64,
    /// What the system prompt and the tools weigh by the rule.
    pub fixed_raw: u64,
    pub estimator: Estimator,
    /// The compaction in force.
    pub summary: Option<CompactionRow>,
}

impl Window {
    /// For a run of model `reference` asking `max_tokens` per reply, with this system
    /// prompt and these tools.
    pub fn new(
        cfg: &Config,
        reference: &str,
        max_tokens: u32,
        system: &str,
        tools: &[ToolSpec],
        summary: Option<CompactionRow>,
    ) -> Window {
        let window = u64::from(window_of(cfg, reference));
        let tools_bytes: usize = tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len() + 16)
            .sum();
        Window {
            window,
            reserve: u64::from(max_tokens).min(window / 2),
            threshold: cfg.session.compaction.threshold,
            keep_recent: cfg.session.compaction.keep_recent,
            fixed_raw: estimate::of_bytes(system.len() + tools_bytes) + estimate::PER_MESSAGE,
            estimator: Estimator::default(),
            summary,
        }
    }

    /// Fit to `reference`'s window from now on, with room for `max_tokens` of reply
    /// (the model that serves the next call: a fallback may have a smaller window).
    pub fn serve_with(&mut self, cfg: &Config, reference: &str, max_tokens: u32) {
        self.window = u64::from(window_of(cfg, reference));
        self.reserve = u64::from(max_tokens).min(self.window / 2);
    }

    /// The prompt's limits: the hard one is the window less the reply's room, the soft
    /// one the threshold's share of it.
    pub fn limits(&self) -> Limits {
        let hard = self.window.saturating_sub(self.reserve);
        Limits {
            soft: (hard as f64 * self.threshold) as u64,
            hard,
        }
    }

    /// Tokens (by the rule) the newest turns keep after a compaction.
    pub fn keep(&self) -> u64 {
        let keep = (self.limits().hard as f64 * self.keep_recent) as u64;
        (keep as f64 / self.estimator.scale()) as u64
    }

    /// `rows` (the session's transcript) as a fitted request.
    pub fn fit(&self, rows: &[MessageRow]) -> Fitted {
        self.fit_messages(view::chat(rows, self.summary.as_ref()))
    }

    /// `messages` fitted.
    pub fn fit_messages(&self, messages: Vec<ChatMessage>) -> Fitted {
        fit::fit(messages, self.fixed_raw, &self.estimator, self.limits())
    }

    /// Whether a request this heavy calls for a compaction.
    pub fn wants_compaction(&self, fitted: &Fitted) -> bool {
        fitted.tokens > self.limits().soft || fitted.dropped > 0
    }

    /// What a summary request may weigh: most of the window less the summary's room.
    pub fn summary_budget(&self) -> u64 {
        (self.limits().hard as f64 * 0.9) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_comes_from_the_model_entry_else_the_default() {
        // Built from JSON, as the file is: the test does not depend on every field.
        let cfg: Config = serde_json::from_value(serde_json::json!({
            "models": {"providers": {"p": {
                "api": "openai-chat",
                "models": [{"id": "small", "contextWindow": 16000}],
            }}},
        }))
        .expect("config");
        assert_eq!(window_of(&cfg, "p/small"), 16_000);
        assert_eq!(window_of(&cfg, "p/other"), DEFAULT_CONTEXT_WINDOW);
        assert_eq!(window_of(&cfg, "nope"), DEFAULT_CONTEXT_WINDOW);
        let w = Window::new(&cfg, "p/small", 4096, "", &[], None);
        assert_eq!(
            w.limits(),
            Limits {
                soft: 9523,
                hard: 11_904
            }
        );
    }
}
