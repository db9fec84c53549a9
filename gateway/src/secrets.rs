//! The daemon's secrets as values, so no log line and no API answer shows one: the config's
//! secret-bearing values (`config::redact::secret_values`: tokens, keys, passwords, the
//! values of `env` and `headers` maps, URL passwords), the provider keys from the
//! environment and the gateway token are remembered at start (and on each config reload),
//! and [`scrub`] replaces them in text. Every log line goes through [`LogWriter`]; text
//! that came from outside the daemon's control (an MCP server's error) goes through
//! [`scrub`] before an API answer carries it.

use std::borrow::Cow;
use std::sync::Arc;

use parking_lot::RwLock;

/// What replaces a secret in text.
pub const REDACTED: &str = "<redacted>";
/// Shorter values are not scrubbed: a two-letter "secret" would blank every word holding
/// it. (Config validation asks for longer tokens where it can.)
pub const MIN_SCRUBBED_LEN: usize = 6;

/// The environment variables the daemon reads secrets from.
pub const ENV_SECRETS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "SWITCHBOARD_TOKEN",
    "TELEGRAM_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
];

static KNOWN: RwLock<Vec<Arc<str>>> = RwLock::new(Vec::new());

/// Adds `values` to the secrets scrubbed from now on (longest first, so a secret that
/// contains another is replaced whole).
pub fn remember<I, S>(values: I)
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut known = KNOWN.write();
    for v in values {
        let v = v.as_ref();
        if v.chars().count() >= MIN_SCRUBBED_LEN && !known.iter().any(|k| &**k == v) {
            known.push(Arc::from(v));
        }
    }
    known.sort_by_key(|k| std::cmp::Reverse(k.len()));
}

/// Remembers every secret of `cfg` (its values after `${VAR}` substitution).
pub fn remember_config(cfg: &crate::config::Config) {
    if let Ok(value) = serde_json::to_value(cfg) {
        remember(crate::config::redact::secret_values(&value));
    }
}

/// `text` with every remembered secret replaced by `<redacted>`.
pub fn scrub(text: &str) -> Cow<'_, str> {
    let known = KNOWN.read();
    let mut out = Cow::Borrowed(text);
    for secret in known.iter() {
        if out.contains(&**secret) {
            out = Cow::Owned(out.replace(&**secret, REDACTED));
        }
    }
    out
}

/// The log's writer: stderr, each formatted event scrubbed of the remembered secrets.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogWriter;

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(scrub(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        LogWriter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a remembered secret left in text, a short value blanking words, or a
    /// secret containing another replaced in halves.
    #[test]
    fn remembered_secrets_are_scrubbed() {
        remember(["tok-scrub-1234", "tok-scrub-1234-longer", "abc"]);
        assert_eq!(
            scrub("a tok-scrub-1234-longer and tok-scrub-1234; abc"),
            "a <redacted> and <redacted>; abc"
        );
        assert!(matches!(scrub("nothing here"), Cow::Borrowed(_)));
    }
}
