//! The report: one row per figure (value, target, pass/miss), printed as a table on stdout
//! and written as JSON.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;

use crate::stats::Percentiles;

/// What a figure is held to.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "limit")]
pub enum Target {
    AtMost(f64),
    AtLeast(f64),
    /// A yes/no figure that must hold.
    Holds,
}

impl Target {
    fn render(self, unit: &str) -> String {
        match self {
            Target::AtMost(limit) => format!("<= {} {unit}", number(limit)),
            Target::AtLeast(limit) => format!(">= {} {unit}", number(limit)),
            Target::Holds => "holds".to_owned(),
        }
    }
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figure {
    pub scenario: &'static str,
    pub figure: String,
    /// Numeric value; `None` for a yes/no figure.
    pub value: Option<f64>,
    pub unit: &'static str,
    /// The value as printed (for yes/no figures, what was seen).
    pub shown: String,
    pub target: Option<Target>,
    /// `None` when the figure has no target (context only).
    pub pass: Option<bool>,
}

impl Figure {
    /// A number shown for context, without a target.
    pub fn info(
        scenario: &'static str,
        figure: impl Into<String>,
        value: f64,
        unit: &'static str,
    ) -> Figure {
        Figure {
            scenario,
            figure: figure.into(),
            value: Some(value),
            unit,
            shown: format!("{} {unit}", number(value)),
            target: None,
            pass: None,
        }
    }

    /// A number held to `target`.
    pub fn with_target(
        scenario: &'static str,
        figure: impl Into<String>,
        value: f64,
        unit: &'static str,
        target: Target,
    ) -> Figure {
        let pass = match target {
            Target::AtMost(limit) => value <= limit,
            Target::AtLeast(limit) => value >= limit,
            Target::Holds => true,
        };
        Figure {
            target: Some(target),
            pass: Some(pass),
            ..Figure::info(scenario, figure, value, unit)
        }
    }

    /// A yes/no figure that must hold; `shown` says what was seen.
    pub fn check(
        scenario: &'static str,
        figure: impl Into<String>,
        holds: bool,
        shown: String,
    ) -> Figure {
        Figure {
            scenario,
            figure: figure.into(),
            value: None,
            unit: "",
            shown,
            target: Some(Target::Holds),
            pass: Some(holds),
        }
    }

    /// p50, p90 and p99 of `p` as three rows named `<name> p50` …, each held to `target`
    /// when one is given.
    pub fn percentiles(
        scenario: &'static str,
        name: &str,
        p: &Percentiles,
        target: Option<Target>,
    ) -> Vec<Figure> {
        [("p50", p.p50), ("p90", p.p90), ("p99", p.p99)]
            .into_iter()
            .map(|(label, value)| {
                let figure = format!("{name} {label}");
                match target {
                    Some(target) => Figure::with_target(scenario, figure, value, "ms", target),
                    None => Figure::info(scenario, figure, value, "ms"),
                }
            })
            .collect()
    }
}

/// What one scenario produced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioReport {
    pub name: &'static str,
    /// How the figures were measured, in a sentence or three.
    pub method: String,
    /// Anything worth a look: gateway warnings, dropped events, errors of single requests.
    pub notes: Vec<String>,
    /// Extra data (sample summaries, counters) kept in the JSON only.
    pub details: serde_json::Value,
    /// The scenario's own failure (it could not finish), if any.
    pub error: Option<String>,
    pub seconds: f64,
    /// `/proc/loadavg` before and after.
    pub load_before: String,
    pub load_after: String,
    #[serde(skip)]
    pub figures: Vec<Figure>,
}

/// The whole report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Seconds since the Unix epoch when the run started.
    pub started_at: u64,
    pub binary: String,
    pub cpus: usize,
    pub settings: serde_json::Value,
    pub figures: Vec<Figure>,
    pub scenarios: Vec<ScenarioReport>,
}

impl Report {
    pub fn add(&mut self, scenario: ScenarioReport) {
        self.figures.extend(scenario.figures.iter().cloned());
        self.scenarios.push(scenario);
    }

    /// The table: figure, value, target, pass/miss; then each scenario's method and notes.
    pub fn render_table(&self) -> String {
        let rows: Vec<[String; 4]> = self
            .figures
            .iter()
            .map(|f| {
                [
                    format!("{}: {}", f.scenario, f.figure),
                    f.shown.clone(),
                    f.target.map(|t| t.render(f.unit)).unwrap_or_default(),
                    match f.pass {
                        Some(true) => "pass".to_owned(),
                        Some(false) => "MISS".to_owned(),
                        None => String::new(),
                    },
                ]
            })
            .collect();
        let header = [
            "figure".to_owned(),
            "value".to_owned(),
            "target".to_owned(),
            "result".to_owned(),
        ];
        let mut widths = header.clone().map(|h| h.chars().count());
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, row: &[String; 4]| {
            let _ = writeln!(
                out,
                "{:<w0$}  {:>w1$}  {:<w2$}  {}",
                row[0],
                row[1],
                row[2],
                row[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
            );
        };
        line(&mut out, &header);
        let _ = writeln!(
            out,
            "{}",
            "-".repeat(widths.iter().sum::<usize>() + 6 + widths[3])
        );
        for row in &rows {
            line(&mut out, row);
        }
        for s in &self.scenarios {
            let _ = writeln!(
                out,
                "\n[{}] ({:.1} s; load {} -> {})",
                s.name, s.seconds, s.load_before, s.load_after
            );
            let _ = writeln!(out, "  method: {}", s.method);
            if let Some(error) = &s.error {
                let _ = writeln!(out, "  ERROR: {error}");
            }
            for note in &s.notes {
                let _ = writeln!(out, "  note: {note}");
            }
        }
        out
    }

    pub fn write_json(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let json = serde_json::to_string_pretty(self).context("serializing the report")?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))
    }
}

/// A number with as many decimals as its size deserves.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
