//! The announce message: `Status / Result / Notes` as its text, and the `Stats` line as
//! its footer, which the outbox keeps apart and every adapter sends whole and last.

use std::time::Duration;

/// What an announce says, as plain values (rendering is pure, for snapshot tests).
#[derive(Debug, Clone, PartialEq)]
pub struct Announce {
    /// success | error | timeout | unknown
    pub status: &'static str,
    pub result: Option<String>,
    pub notes: Option<String>,
    pub runtime: Duration,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: Option<f64>,
    pub session_key: String,
    pub session_id: String,
    pub transcript: String,
}

/// Status from the runtime outcome, never from model text.
pub fn status_of(outcome: &str) -> &'static str {
    match outcome {
        "success" => "success",
        "error" => "error",
        "timeout" => "timeout",
        _ => "unknown",
    }
}

/// A rendered announce: the text and the one-line footer that ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// `Status: …\nResult: …\nNotes: …`
    pub text: String,
    /// `Stats: runtime … • tokens … • sessionKey … • sessionId … • transcript …`
    pub footer: String,
}

/// The announce as people read it: the text, then the footer on its own line.
impl std::fmt::Display for Rendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n{}", self.text, self.footer)
    }
}

pub fn render(a: &Announce) -> Rendered {
    let result = a
        .result
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or("(not available)");
    let notes = a
        .notes
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or("none");
    let total = a.input_tokens + a.output_tokens;
    let mut stats = format!(
        "Stats: runtime {} • tokens {} (in {} / out {})",
        runtime(a.runtime),
        tokens(total),
        tokens(a.input_tokens),
        tokens(a.output_tokens)
    );
    if let Some(c) = a.cost_usd {
        stats.push_str(&format!(" • est {}", cost(c)));
    }
    stats.push_str(&format!(
        " • sessionKey {} • sessionId {} • transcript {}",
        a.session_key, a.session_id, a.transcript
    ));
    // The footer is one line: fold any newline out of it.
    Rendered {
        text: format!("Status: {}\nResult: {result}\nNotes: {notes}", a.status),
        footer: stats.replace('\n', " "),
    }
}

/// `5m12s`, `1h2m3s`, `42s`, `350ms`.
pub fn runtime(d: Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        return format!("{}ms", d.as_millis());
    }
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if h > 0 || m > 0 {
        out.push_str(&format!("{m}m"));
    }
    out.push_str(&format!("{s}s"));
    out
}

/// `950`, `2.3k`, `10k`, `12.3k`, `1.5M`.
pub fn tokens(n: u64) -> String {
    fn short(v: f64, suffix: &str) -> String {
        let s = format!("{v:.1}");
        format!("{}{suffix}", s.strip_suffix(".0").unwrap_or(&s))
    }
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => short(n as f64 / 1_000.0, "k"),
        _ => short(n as f64 / 1_000_000.0, "M"),
    }
}

fn cost(usd: f64) -> String {
    if usd >= 0.01 || usd == 0.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(status: &'static str) -> Announce {
        Announce {
            status,
            result: Some("Found 3 flaky tests; fixed 2.".into()),
            notes: None,
            runtime: Duration::from_secs(312),
            input_tokens: 10_000,
            output_tokens: 2_300,
            cost_usd: Some(0.0421),
            session_key: "agent:main:subagent:5a1d0c7e-0000-4000-8000-000000000001".into(),
            session_id: "9f8e7d6c-0000-4000-8000-000000000002".into(),
            transcript: "/api/sessions/agent:main:subagent:5a1d0c7e-0000-4000-8000-000000000001/transcript?sessionId=9f8e7d6c-0000-4000-8000-000000000002".into(),
        }
    }

    #[test]
    fn success() {
        insta::assert_snapshot!(render(&base("success")));
    }

    #[test]
    fn error() {
        let mut a = base("error");
        a.result = None;
        a.notes = Some("model API server error (HTTP 500): upstream overloaded".into());
        a.cost_usd = None;
        insta::assert_snapshot!(render(&a));
    }

    #[test]
    fn timeout() {
        let mut a = base("timeout");
        a.result = Some("Partial: checked 40 of 120 files.".into());
        a.notes = Some("the run timed out after 5m".into());
        a.runtime = Duration::from_secs(300);
        insta::assert_snapshot!(render(&a));
    }

    #[test]
    fn stopped() {
        let mut a = base(status_of("cancelled"));
        a.result = None;
        a.notes = Some("stopped by /subagents stop".into());
        a.runtime = Duration::from_millis(420);
        a.input_tokens = 950;
        a.output_tokens = 0;
        a.cost_usd = Some(0.0009);
        insta::assert_snapshot!(render(&a));
    }

    #[test]
    fn token_and_runtime_formats() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(10_000), "10k");
        assert_eq!(tokens(1_500_000), "1.5M");
        assert_eq!(runtime(Duration::from_secs(3723)), "1h2m3s");
        assert_eq!(runtime(Duration::from_secs(42)), "42s");
    }
}
