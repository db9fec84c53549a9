//! How long the daemon's own work takes, as Prometheus histograms on `/metrics`: a turn
//! (a run from its lane start to its end, per lane), a tool call (per tool) and a channel
//! send (one outbox row handed to its channel, per channel and outcome). The model call's
//! histogram is with the tokens and cost, in `agent::usage::metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use parking_lot::Mutex;

/// Upper bounds of the buckets, in seconds: from a fast tool call (1 ms) to a long turn.
pub const BUCKETS: [f64; 15] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0,
];
/// Most label values with a series of their own per histogram; further ones (tool names
/// come from MCP servers, which a reload can change many times) count under `other`.
const MAX_SERIES: usize = 64;

/// One series: calls per bucket (not cumulative; summed when rendered), count and sum.
#[derive(Debug, Clone, Default)]
struct Series {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Series {
    fn observe(&mut self, seconds: f64) {
        self.count += 1;
        self.sum += seconds;
        if let Some(i) = BUCKETS.iter().position(|&le| seconds <= le) {
            self.buckets[i] += 1;
        }
    }
}

/// A histogram with one label, bounded in its number of series.
#[derive(Debug)]
struct Histogram {
    name: &'static str,
    help: &'static str,
    /// The label's names, in order, joined into each series' key with `\u{1f}`.
    labels: &'static [&'static str],
    series: Mutex<BTreeMap<String, Series>>,
}

impl Histogram {
    const fn new(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
    ) -> Histogram {
        Histogram {
            name,
            help,
            labels,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    fn observe(&self, values: &[&str], took: Duration) {
        let key = values.join("\u{1f}");
        let mut map = self.series.lock();
        let key = if map.contains_key(&key) || map.len() < MAX_SERIES {
            key
        } else {
            vec!["other"; self.labels.len()].join("\u{1f}")
        };
        map.entry(key).or_default().observe(took.as_secs_f64());
    }

    fn render(&self, out: &mut String) {
        let map = self.series.lock().clone();
        let name = self.name;
        let _ = writeln!(out, "# HELP {name} {}\n# TYPE {name} histogram", self.help);
        for (key, s) in &map {
            let labels: Vec<String> = self
                .labels
                .iter()
                .zip(key.split('\u{1f}'))
                .map(|(l, v)| format!("{l}=\"{}\"", label(v)))
                .collect();
            let labels = labels.join(",");
            let mut cumulative = 0;
            for (le, n) in BUCKETS.iter().zip(s.buckets) {
                cumulative += n;
                let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{le}\"}} {cumulative}");
            }
            let _ = writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", s.count);
            let _ = writeln!(out, "{name}_sum{{{labels}}} {}", s.sum);
            let _ = writeln!(out, "{name}_count{{{labels}}} {}", s.count);
        }
    }
}

/// The latency histograms of this process (`Runtime::latency`).
#[derive(Debug)]
pub struct Latency {
    turn: Histogram,
    tool: Histogram,
    send: Histogram,
}

impl Default for Latency {
    fn default() -> Latency {
        Latency {
            turn: Histogram::new(
                "switchboard_turn_seconds",
                "How long one run took on its lane, from its start to its end (model calls and tools included).",
                &["lane"],
            ),
            tool: Histogram::new(
                "switchboard_tool_call_seconds",
                "How long one tool call took (an approval's wait included).",
                &["tool"],
            ),
            send: Histogram::new(
                "switchboard_channel_send_seconds",
                "How long handing one outbox message to its channel took, per channel and outcome (ok or error).",
                &["channel", "outcome"],
            ),
        }
    }
}

impl Latency {
    /// A run on `lane` took `took`.
    pub fn observe_turn(&self, lane: &str, took: Duration) {
        self.turn.observe(&[lane], took);
    }

    /// A call of `tool` took `took` (answered or not).
    pub fn observe_tool(&self, tool: &str, took: Duration) {
        self.tool.observe(&[tool], took);
    }

    /// A send to `channel` took `took`; `ok`: the channel took it.
    pub fn observe_send(&self, channel: &str, ok: bool, took: Duration) {
        let outcome = if ok { "ok" } else { "error" };
        self.send.observe(&[channel, outcome], took);
    }

    /// The histograms in Prometheus' text format.
    pub fn render(&self, out: &mut String) {
        self.turn.render(out);
        self.tool.render(out);
        self.send.render(out);
    }
}

/// `v` as a Prometheus label value: `\`, `"` and line breaks escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: buckets rendered per bucket instead of cumulative, a `+Inf` bucket that
    /// misses slow calls, a missing HELP or TYPE line, and label values that break the
    /// format.
    #[test]
    fn histograms_render_cumulative_with_help_and_type() {
        let l = Latency::default();
        l.observe_tool("ex\"ec", Duration::from_micros(800));
        l.observe_tool("ex\"ec", Duration::from_millis(20));
        l.observe_tool("ex\"ec", Duration::from_secs(600));
        l.observe_send("telegram", false, Duration::from_millis(3));
        let mut out = String::new();
        l.render(&mut out);
        for line in [
            "# HELP switchboard_turn_seconds How long one run took on its lane, from its start to its end (model calls and tools included).",
            "# TYPE switchboard_turn_seconds histogram",
            "# TYPE switchboard_tool_call_seconds histogram",
            "# TYPE switchboard_channel_send_seconds histogram",
            "switchboard_tool_call_seconds_bucket{tool=\"ex\\\"ec\",le=\"0.001\"} 1",
            "switchboard_tool_call_seconds_bucket{tool=\"ex\\\"ec\",le=\"0.025\"} 2",
            "switchboard_tool_call_seconds_bucket{tool=\"ex\\\"ec\",le=\"120\"} 2",
            "switchboard_tool_call_seconds_bucket{tool=\"ex\\\"ec\",le=\"+Inf\"} 3",
            "switchboard_tool_call_seconds_count{tool=\"ex\\\"ec\"} 3",
            "switchboard_channel_send_seconds_bucket{channel=\"telegram\",outcome=\"error\",le=\"0.005\"} 1",
        ] {
            assert!(out.lines().any(|x| x == line), "missing {line}\n{out}");
        }
    }

    /// Catches: series without bound when ever more tool names come and go.
    #[test]
    fn label_values_past_the_cap_count_as_other() {
        let l = Latency::default();
        for i in 0..(MAX_SERIES + 5) {
            l.observe_tool(&format!("mcp_t{i}"), Duration::from_millis(1));
        }
        let map = l.tool.series.lock();
        assert_eq!(map.len(), MAX_SERIES + 1);
        assert_eq!(map["other"].count, 5);
    }
}
