//! Thinking levels (`thinking` of an agent, a spawn, `agents.defaults.subagents.thinking`):
//! what the config and agent files accept. What each model API makes of a level is in
//! `agent/provider/thinking.rs`.

use std::fmt;
use std::str::FromStr;

/// A thinking level. `off` asks for no reasoning at all (the provider's default is used
/// when no level is set anywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Thinking {
    Off,
    Minimal,
    Low,
    Medium,
    High,
}

/// The accepted spellings, for error messages and the schema.
pub const THINKING_LEVELS: &str = "off, minimal, low, medium, high";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown thinking level {0:?}; accepted: {THINKING_LEVELS}")]
pub struct UnknownThinking(pub String);

impl FromStr for Thinking {
    type Err = UnknownThinking;

    /// Case-insensitive; `none` and `disabled` are read as `off`.
    fn from_str(s: &str) -> Result<Thinking, UnknownThinking> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "disabled" => Thinking::Off,
            "minimal" => Thinking::Minimal,
            "low" => Thinking::Low,
            "medium" => Thinking::Medium,
            "high" => Thinking::High,
            _ => return Err(UnknownThinking(s.chars().take(64).collect())),
        })
    }
}

impl fmt::Display for Thinking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Thinking::Off => "off",
            Thinking::Minimal => "minimal",
            Thinking::Low => "low",
            Thinking::Medium => "medium",
            Thinking::High => "high",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a level read differently from how it is shown.
    #[test]
    fn levels_parse_and_show() {
        for (text, level) in [
            ("off", Thinking::Off),
            ("Minimal", Thinking::Minimal),
            ("low", Thinking::Low),
            ("MEDIUM", Thinking::Medium),
            (" high ", Thinking::High),
            ("none", Thinking::Off),
        ] {
            let parsed: Thinking = text.parse().expect(text);
            assert_eq!(parsed, level);
            assert_eq!(parsed.to_string().parse::<Thinking>(), Ok(level));
        }
        let err = "max".parse::<Thinking>().expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "unknown thinking level \"max\"; accepted: off, minimal, low, medium, high"
        );
    }
}
