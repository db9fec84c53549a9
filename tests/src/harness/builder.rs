//! `GatewayBuilder`: the config, environment and state dir a test gateway starts with.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use tempfile::TempDir;
use tokio::task::JoinSet;

use super::log::Log;
use super::{Gateway, DEFAULT_CONFIG, DEFAULT_READY_TIMEOUT};

/// The gateway's state dir: a fresh temporary one (removed on drop) or one the test chose.
pub(super) enum StateDir {
    Temp(TempDir),
    Given(PathBuf),
}

impl StateDir {
    pub(super) fn path(&self) -> &Path {
        match self {
            StateDir::Temp(dir) => dir.path(),
            StateDir::Given(path) => path,
        }
    }
}

/// Builds and starts a [`Gateway`].
pub struct GatewayBuilder {
    bin: PathBuf,
    config: String,
    env: Vec<(String, String)>,
    state_dir: Option<PathBuf>,
    files: Vec<(PathBuf, String)>,
    ready_timeout: Duration,
}

impl GatewayBuilder {
    /// A gateway running `bin` (use `env!("CARGO_BIN_EXE_switchboard")`) with
    /// [`DEFAULT_CONFIG`] in a fresh temporary state dir.
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        GatewayBuilder {
            bin: bin.into(),
            config: DEFAULT_CONFIG.to_owned(),
            env: Vec::new(),
            state_dir: None,
            files: Vec::new(),
            ready_timeout: DEFAULT_READY_TIMEOUT,
        }
    }

    /// The JSON5 config text, written to `<state_dir>/config.json5` before start.
    pub fn config(mut self, json5: impl Into<String>) -> Self {
        self.config = json5.into();
        self
    }

    /// Sets an environment variable for the daemon (overrides the harness defaults, e.g.
    /// `RUST_LOG`).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Uses an existing state dir instead of a fresh temporary one (it is not removed).
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Writes a file (parent dirs created) at `relative` inside the state dir before start,
    /// e.g. `home/.config/switchboard/agents/reviewer.md` or `.switchboard/agents/x.md` (the
    /// state dir is the daemon's working directory).
    pub fn file(mut self, relative: impl Into<PathBuf>, contents: impl Into<String>) -> Self {
        self.files.push((relative.into(), contents.into()));
        self
    }

    /// How long to wait for the ready line (default 30 s).
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// Writes the config, starts the daemon and waits for its ready line.
    ///
    /// If the daemon exits first, the error is an [`EarlyExit`] (reachable with
    /// `err.downcast_ref::<EarlyExit>()`) carrying the exit status and everything it printed.
    pub async fn start(self) -> anyhow::Result<Gateway> {
        let mut gateway = self.launch().await?;
        gateway.wait_ready().await?;
        Ok(gateway)
    }

    /// Writes the config and starts the daemon without waiting for its ready line (e.g. a
    /// standby, which prints it only once it takes over): then [`Gateway::wait_ready`].
    pub async fn launch(self) -> anyhow::Result<Gateway> {
        let state = match self.state_dir {
            Some(dir) => {
                tokio::fs::create_dir_all(&dir)
                    .await
                    .with_context(|| format!("creating state dir {}", dir.display()))?;
                StateDir::Given(dir)
            }
            None => StateDir::Temp(
                tempfile::Builder::new()
                    .prefix("switchboard-e2e-")
                    .tempdir()
                    .context("creating a temporary state dir")?,
            ),
        };
        let config_path = state.path().join("config.json5");
        let http = super::http_client(None)?;
        let mut gateway = Gateway {
            bin: self.bin,
            env: self.env,
            ready_timeout: self.ready_timeout,
            config_path,
            state,
            child: None,
            base_url: String::new(),
            log: Arc::new(Log::default()),
            readers: JoinSet::new(),
            http,
            token: None,
            web_chat_line: None,
            _watch: super::Watch::start(),
            pending: None,
        };
        for (relative, contents) in &self.files {
            if relative.is_absolute() {
                bail!(
                    "GatewayBuilder::file wants a path relative to the state dir: {}",
                    relative.display()
                );
            }
            let path = gateway.state_dir().join(relative);
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent).await?;
            }
            tokio::fs::write(&path, contents)
                .await
                .with_context(|| format!("writing {}", path.display()))?;
        }
        gateway.write_config(&self.config).await?;
        gateway.launch().await?;
        Ok(gateway)
    }
}
