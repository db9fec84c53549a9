//! Token estimates: a conservative rule on bytes (3.5 bytes a token, plus a fixed cost per
//! message and per tool call), scaled by what the provider reported for the previous call
//! of the run. Pure and cheap: a sum of lengths, no tokenizer.

use crate::agent::provider::ChatMessage;

/// Bytes per token the rule assumes, as a ratio (7 bytes = 2 tokens): below the ~4 of
/// English text with current tokenizers, so an unscaled estimate errs long.
const BYTES_PER_TWO_TOKENS: u64 = 7;
/// What a message costs beyond its text (role, separators).
pub const PER_MESSAGE: u64 = 8;
/// What a tool call costs beyond its name and arguments (id, framing).
const PER_CALL: u64 = 12;
/// The scale never goes below this: an estimate never falls under 4 bytes a token.
const MIN_SCALE: f64 = 3.5 / 4.0;
/// Nor above this (a provider's figure that far off is not believed).
const MAX_SCALE: f64 = 4.0;

/// Tokens of `bytes` bytes of text by the rule.
pub fn of_bytes(bytes: usize) -> u64 {
    (bytes as u64 * 2).div_ceil(BYTES_PER_TWO_TOKENS)
}

/// Tokens of one message by the rule (unscaled).
pub fn of_message(m: &ChatMessage) -> u64 {
    let calls: u64 = m
        .tool_calls
        .iter()
        .map(|c| of_bytes(c.name.len() + c.arguments.len() + c.id.len()) + PER_CALL)
        .sum();
    of_bytes(m.content.len()) + calls + PER_MESSAGE
}

/// The rule, scaled by the provider's own count of an earlier request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimator {
    scale: f64,
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator { scale: 1.0 }
    }
}

impl Estimator {
    /// Scales `raw` (tokens by the rule).
    pub fn scaled(&self, raw: u64) -> u64 {
        (raw as f64 * self.scale).ceil() as u64
    }

    /// Learns from a call: the rule said `estimated` for its prompt, the provider
    /// `reported`. Nothing is learnt from a call without a figure.
    pub fn calibrate(&mut self, estimated: u64, reported: u64) {
        if estimated == 0 || reported == 0 {
            return;
        }
        self.scale = (reported as f64 / estimated as f64).clamp(MIN_SCALE, MAX_SCALE);
    }

    /// Makes later estimates longer by a quarter (after the provider refused a request
    /// the estimate said would fit).
    pub fn distrust(&mut self) {
        self.scale = (self.scale * 1.25).min(MAX_SCALE);
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_errs_long_and_calibration_stays_in_bounds() {
        assert_eq!(of_bytes(0), 0);
        assert_eq!(of_bytes(7), 2);
        assert_eq!(of_bytes(3500), 1000);
        let mut e = Estimator::default();
        e.calibrate(1000, 1200);
        assert_eq!(e.scaled(1000), 1200);
        // A provider that counts fewer tokens never brings the estimate under 4 bytes a token.
        e.calibrate(1000, 10);
        assert_eq!(e.scaled(1000), 875);
        e.calibrate(1000, 1_000_000);
        assert_eq!(e.scaled(1000), 4000);
        e.calibrate(0, 5);
        assert_eq!(e.scaled(1000), 4000);
    }
}
