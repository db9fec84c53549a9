//! The HTTP client the daemon calls out with (model providers, hooks, transcription),
//! with the trust roots of `roots`, and the API keys found in the environment at start.

use std::ops::Deref;
use std::sync::LazyLock;

/// API keys picked up from the environment at start (never re-read mid-run).
#[derive(Debug, Clone, Default)]
pub struct EnvKeys {
    pub openai: Option<String>,
    pub anthropic: Option<String>,
}

/// The outgoing client (made on first use) and the keys from the environment.
pub struct Http {
    client: LazyLock<reqwest::Client>,
    pub keys: EnvKeys,
}

impl Http {
    pub fn new(keys: EnvKeys) -> Http {
        Http {
            client: LazyLock::new(super::roots::client),
            keys,
        }
    }
}

impl Deref for Http {
    type Target = reqwest::Client;

    fn deref(&self) -> &reqwest::Client {
        &self.client
    }
}
