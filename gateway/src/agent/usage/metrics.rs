//! The model calls of this process as Prometheus series: tokens read and written and the
//! estimated cost per model (counters since start), and a histogram of how long one call
//! took (its retries included). Rendered into `/metrics` by `server::metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;

use parking_lot::Mutex;

/// Upper bounds of the latency histogram's buckets, in seconds.
pub const BUCKETS: [f64; 11] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0];
/// Most models with series of their own; calls of further models count under `other`
/// (models come from the config, which a reload can change many times).
const MAX_MODELS: usize = 64;

#[derive(Debug, Clone, Default)]
struct Series {
    input: u64,
    output: u64,
    cost: f64,
    /// Calls per bucket (not cumulative; summed when rendered).
    buckets: [u64; BUCKETS.len()],
    calls: u64,
    seconds: f64,
}

/// The model series of this process.
#[derive(Debug, Default)]
pub struct ModelMetrics {
    by_model: Mutex<BTreeMap<String, Series>>,
}

impl ModelMetrics {
    fn with(&self, model: &str, f: impl FnOnce(&mut Series)) {
        let mut map = self.by_model.lock();
        let key = if map.contains_key(model) || map.len() < MAX_MODELS {
            model
        } else {
            "other"
        };
        f(map.entry(key.to_string()).or_default());
    }

    /// One model call of `model` took `seconds` (answered or not).
    pub fn observe_call(&self, model: &str, seconds: f64) {
        self.with(model, |s| {
            s.calls += 1;
            s.seconds += seconds;
            if let Some(i) = BUCKETS.iter().position(|&le| seconds <= le) {
                s.buckets[i] += 1;
            }
        });
    }

    /// An answered call's usage and its estimated cost (`None`: the model has no price).
    pub fn add_usage(&self, model: &str, input: u64, output: u64, cost: Option<f64>) {
        self.with(model, |s| {
            s.input += input;
            s.output += output;
            s.cost += cost.unwrap_or(0.0);
        });
    }

    /// The series in Prometheus' text format.
    pub fn render(&self, out: &mut String) {
        let map = self.by_model.lock().clone();
        let _ = writeln!(
            out,
            "# HELP switchboard_model_tokens_total Tokens the models read (input) and wrote (output), since start.\n\
             # TYPE switchboard_model_tokens_total counter"
        );
        for (model, s) in &map {
            let m = label(model);
            let _ = writeln!(
                out,
                "switchboard_model_tokens_total{{model=\"{m}\",direction=\"input\"}} {}",
                s.input
            );
            let _ = writeln!(
                out,
                "switchboard_model_tokens_total{{model=\"{m}\",direction=\"output\"}} {}",
                s.output
            );
        }
        let _ = writeln!(
            out,
            "# HELP switchboard_model_cost_usd_total Estimated cost of the model calls in USD (models with a price), since start.\n\
             # TYPE switchboard_model_cost_usd_total counter"
        );
        for (model, s) in &map {
            let _ = writeln!(
                out,
                "switchboard_model_cost_usd_total{{model=\"{}\"}} {}",
                label(model),
                s.cost
            );
        }
        let _ = writeln!(
            out,
            "# HELP switchboard_model_call_seconds How long one model call took, its retries included.\n\
             # TYPE switchboard_model_call_seconds histogram"
        );
        for (model, s) in &map {
            let m = label(model);
            let mut cumulative = 0;
            for (le, n) in BUCKETS.iter().zip(s.buckets) {
                cumulative += n;
                let _ = writeln!(out, "switchboard_model_call_seconds_bucket{{model=\"{m}\",le=\"{le}\"}} {cumulative}");
            }
            let _ = writeln!(
                out,
                "switchboard_model_call_seconds_bucket{{model=\"{m}\",le=\"+Inf\"}} {}",
                s.calls
            );
            let _ = writeln!(
                out,
                "switchboard_model_call_seconds_sum{{model=\"{m}\"}} {}",
                s.seconds
            );
            let _ = writeln!(
                out,
                "switchboard_model_call_seconds_count{{model=\"{m}\"}} {}",
                s.calls
            );
        }
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
    /// misses slow calls, and a label value that breaks the exposition format.
    #[test]
    fn series_render_as_prometheus_counters_and_a_cumulative_histogram() {
        let m = ModelMetrics::default();
        m.observe_call("p/a\"b", 0.25);
        m.observe_call("p/a\"b", 3.0);
        m.observe_call("p/a\"b", 500.0);
        m.add_usage("p/a\"b", 100, 20, Some(0.5));
        m.add_usage("p/a\"b", 1, 2, None);
        let mut out = String::new();
        m.render(&mut out);
        for line in [
            "switchboard_model_tokens_total{model=\"p/a\\\"b\",direction=\"input\"} 101",
            "switchboard_model_tokens_total{model=\"p/a\\\"b\",direction=\"output\"} 22",
            "switchboard_model_cost_usd_total{model=\"p/a\\\"b\"} 0.5",
            "switchboard_model_call_seconds_bucket{model=\"p/a\\\"b\",le=\"0.1\"} 0",
            "switchboard_model_call_seconds_bucket{model=\"p/a\\\"b\",le=\"0.25\"} 1",
            "switchboard_model_call_seconds_bucket{model=\"p/a\\\"b\",le=\"5\"} 2",
            "switchboard_model_call_seconds_bucket{model=\"p/a\\\"b\",le=\"120\"} 2",
            "switchboard_model_call_seconds_bucket{model=\"p/a\\\"b\",le=\"+Inf\"} 3",
            "switchboard_model_call_seconds_sum{model=\"p/a\\\"b\"} 503.25",
            "switchboard_model_call_seconds_count{model=\"p/a\\\"b\"} 3",
            "# TYPE switchboard_model_call_seconds histogram",
        ] {
            assert!(out.lines().any(|l| l == line), "missing {line}\n{out}");
        }
    }

    /// Catches: series without bound when the config names ever more models.
    #[test]
    fn models_past_the_cap_count_as_other() {
        let m = ModelMetrics::default();
        for i in 0..(MAX_MODELS + 5) {
            m.add_usage(&format!("p/m{i}"), 1, 1, None);
        }
        let map = m.by_model.lock();
        assert_eq!(map.len(), MAX_MODELS + 1);
        assert_eq!(map["other"].input, 5);
    }
}
