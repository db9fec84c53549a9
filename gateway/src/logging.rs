//! The daemon's log on stderr: `text` (the default, one human line per event) or `json`
//! (`--log-format json`, `SWITCHBOARD_LOG_FORMAT=json`): one JSON object per line with the
//! event's fields at the top level and its spans' fields under `span` (the innermost) and
//! `spans` (all, outermost first) — a run's lines carry `session`, `run` and `channel`.
//! Either way every line is scrubbed of the daemon's secrets (`secrets::LogWriter`), and
//! `RUST_LOG` picks what is logged (default `info`).

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line of text per event.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Install the process's log subscriber.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(crate::secrets::LogWriter)
        .with_ansi(false);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(true)
            .init(),
    }
}
