//! `session.compaction` and `session.reset`: how a long conversation is kept inside its
//! model's context window, and when a session starts fresh by itself (docs/context.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{Issue, KeyPath};

/// The context window assumed for a model whose entry does not give `contextWindow`
/// (docs/context.md): 128k tokens, what most current chat models take at least.
pub const DEFAULT_CONTEXT_WINDOW: u32 = 128_000;

/// `session.compaction`: when the older turns of a session are summarized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactionConfig {
    /// Share of the model's context window (less the room kept for the reply) past which
    /// the older turns are summarized by the model: 0.3 to 0.95.
    pub threshold: f64,
    /// Share of that room the newest turns keep verbatim after a compaction: 0.05 to 0.6,
    /// and below `threshold`.
    pub keep_recent: f64,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            threshold: 0.8,
            keep_recent: 0.3,
        }
    }
}

/// `session.reset`: a session that has been quiet starts fresh on its next message, as
/// after `/new` (the old one is archived, never deleted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ResetConfig {
    /// `"HH:MM"`, the gateway's local time: a session whose last activity is before the
    /// most recent such time starts fresh (e.g. `"04:00"`).
    pub daily: Option<String>,
    /// Minutes without activity after which a session starts fresh: 1 to 525600.
    pub idle_minutes: Option<u32>,
}

/// Reads `"HH:MM"` (00:00 to 23:59) as minutes after midnight.
pub fn parse_daily(s: &str) -> Option<u32> {
    let (h, m) = s.trim().split_once(':')?;
    if h.is_empty() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    let h: u32 = h.parse().ok()?;
    let m: u32 = m.parse().ok()?;
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// The checks of `session.compaction` and `session.reset`.
pub(crate) fn check(c: &CompactionConfig, r: &ResetConfig, out: &mut Vec<Issue>) {
    if !(0.3..=0.95).contains(&c.threshold) {
        out.push(Issue::new(
            KeyPath::dotted("session.compaction.threshold"),
            format!("must be between 0.3 and 0.95, got {}", c.threshold),
        ));
    }
    if !(0.05..=0.6).contains(&c.keep_recent) || c.keep_recent >= c.threshold {
        out.push(Issue::new(
            KeyPath::dotted("session.compaction.keepRecent"),
            format!(
                "must be between 0.05 and 0.6 and below threshold ({}), got {}",
                c.threshold, c.keep_recent
            ),
        ));
    }
    if let Some(d) = &r.daily {
        if parse_daily(d).is_none() {
            out.push(Issue::new(
                KeyPath::dotted("session.reset.daily"),
                format!("must be a local time \"HH:MM\" such as \"04:00\", got {d:?}"),
            ));
        }
    }
    if let Some(m) = r.idle_minutes {
        if !(1..=525_600).contains(&m) {
            out.push(Issue::new(
                KeyPath::dotted("session.reset.idleMinutes"),
                format!("must be 1 to 525600 (a year), got {m}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn daily_times_are_read_strictly() {
        assert_eq!(parse_daily("04:00"), Some(240));
        assert_eq!(parse_daily("4:05"), Some(245));
        assert_eq!(parse_daily("23:59"), Some(23 * 60 + 59));
        for bad in [
            "24:00", "04:60", "04", "04:0", "-1:00", "aa:bb", "", "004:00",
        ] {
            assert_eq!(parse_daily(bad), None, "{bad}");
        }
    }

    #[test]
    fn bad_values_are_refused_with_their_key() {
        let mut out = Vec::new();
        let c = CompactionConfig {
            threshold: 0.99,
            keep_recent: 0.99,
        };
        let r = ResetConfig {
            daily: Some("25:00".into()),
            idle_minutes: Some(0),
        };
        check(&c, &r, &mut out);
        let keys: Vec<String> = out.iter().map(|i| i.path.to_string()).collect();
        assert_eq!(
            keys,
            vec![
                "session.compaction.threshold",
                "session.compaction.keepRecent",
                "session.reset.daily",
                "session.reset.idleMinutes"
            ]
        );
        let mut none = Vec::new();
        check(
            &CompactionConfig::default(),
            &ResetConfig::default(),
            &mut none,
        );
        assert!(none.is_empty());
    }
}
