//! Hot reload: watch the config file, and when it changes read it whole, validate it, and
//! put the applicable part in force through a `tokio::sync::watch` channel (README,
//! Configuration).
//!
//! The file's parent directory is watched, not the file, because editors save by writing a
//! new file and renaming it over the old one. notify's callback runs on its own thread and
//! only forwards events into a tokio channel; all the work happens in one tokio task.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::ConfigError;
use super::limits::MAX_DEBOUNCE;
use super::load::{parse_json5, read_bounded};
use super::source_map::SourceMap;
use super::{parse_config, plan_reload, Config, ReloadMode};

/// How long a file that is not (yet) valid JSON5 is re-read before its errors are reported:
/// an editor may be half-way through writing it.
const SYNTAX_RETRY_WINDOW: Duration = Duration::from_secs(2);
const SYNTAX_RETRY_EVERY: Duration = Duration::from_millis(50);

/// The environment lookup the watcher resolves `${VAR}` with.
pub type SharedEnv = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Starts watching `path` and returns the task doing it (spawned with `tokio::spawn`, so
/// call this inside a tokio runtime). The task ends soon after `cancel` fires.
///
/// The config in force is the value in `tx`: its `gateway.reload` settings decide the mode
/// and the debounce, and each reload is compared with it. After a change, once the file
/// has been quiet for `gateway.reload.debounce`, the file is read whole and parsed with
/// [`parse_config`]:
///
/// - invalid: every error is logged with `tracing::error!` and nothing is sent;
/// - valid, mode `hybrid`/`hot`: [`plan_reload`] decides; `restart_required` keys are
///   logged as warnings, and if anything applies live the new config is sent;
/// - valid, mode `restart`: a warning says a restart is needed; nothing is sent;
/// - mode `off` (at start): nothing is watched; the task only waits for `cancel`;
/// - the file was removed: a warning; the config in force stays.
///
/// Fails when the parent directory cannot be watched (e.g. it does not exist).
pub fn spawn_watcher(
    path: PathBuf,
    env: SharedEnv,
    tx: watch::Sender<Arc<Config>>,
    cancel: CancellationToken,
) -> Result<JoinHandle<()>, ConfigError> {
    if tx.borrow().gateway.reload.mode == ReloadMode::Off {
        tracing::info!("config reload is off (gateway.reload.mode); not watching the file");
        // Keep the sender alive so receivers do not see the channel close.
        return Ok(tokio::spawn(async move {
            cancel.cancelled().await;
            drop(tx);
        }));
    }
    let cannot =
        |why: String| ConfigError::whole_file(format!("cannot watch {}: {why}", path.display()));
    let file_name = path
        .file_name()
        .ok_or_else(|| cannot("not a file path".into()))?
        .to_owned();
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Any event means "read the file again", so when the channel is full the event can be
    // dropped: a reload is already pending and will read the file after this change.
    let (events_tx, events) = mpsc::channel(256);
    // The directory usually also holds the database and its WAL: drop their events here,
    // on notify's thread, instead of waking the reload task for every write.
    let ours = file_name.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let relevant = match &event {
            Ok(e) => e
                .paths
                .iter()
                .any(|p| p.file_name() == Some(ours.as_os_str())),
            Err(_) => true,
        };
        if relevant {
            let _ = events_tx.try_send(event);
        }
    })
    .map_err(|e| cannot(e.to_string()))?;
    watcher
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(|e| cannot(e.to_string()))?;
    let reloader = Reloader {
        path,
        file_name,
        env,
        tx,
        cancel,
        events,
    };
    Ok(tokio::spawn(async move {
        // The watcher stops when dropped, so the task owns it.
        let _watcher = watcher;
        reloader.run().await;
    }))
}

struct Reloader {
    path: PathBuf,
    file_name: OsString,
    env: SharedEnv,
    tx: watch::Sender<Arc<Config>>,
    cancel: CancellationToken,
    events: mpsc::Receiver<notify::Result<notify::Event>>,
}

/// What the next file-system event means.
enum Next {
    Relevant,
    Ignore,
    Closed,
}

impl Reloader {
    async fn run(mut self) {
        loop {
            let next = tokio::select! {
                _ = self.cancel.cancelled() => return,
                event = self.events.recv() => self.classify(event),
            };
            match next {
                Next::Ignore => continue,
                Next::Closed => {
                    tracing::warn!(path = %self.path.display(), "config watcher stopped; file changes are no longer applied");
                    self.cancel.cancelled().await;
                    return;
                }
                Next::Relevant => {}
            }
            if !self.wait_until_quiet().await {
                return;
            }
            self.reload().await;
        }
    }

    fn classify(&self, event: Option<notify::Result<notify::Event>>) -> Next {
        match event {
            None => Next::Closed,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "config watcher error");
                Next::Ignore
            }
            // Reading the file ourselves produces access events: ignore them, or every
            // reload would trigger the next one.
            Some(Ok(event)) if matches!(event.kind, EventKind::Access(_)) => Next::Ignore,
            Some(Ok(event)) if event.need_rescan() => Next::Relevant,
            Some(Ok(event)) => {
                let ours = event
                    .paths
                    .iter()
                    .any(|p| p.file_name() == Some(self.file_name.as_os_str()));
                if ours {
                    Next::Relevant
                } else {
                    Next::Ignore
                }
            }
        }
    }

    /// Waits until no relevant event came for the debounce time. False when cancelled.
    async fn wait_until_quiet(&mut self) -> bool {
        // Validation keeps the debounce in range; the clamp keeps `Instant + d` from
        // overflowing (a panic that would end hot reload) even for a config built in code.
        let debounce = self.tx.borrow().gateway.reload.debounce.min(MAX_DEBOUNCE);
        let mut deadline = Instant::now() + debounce;
        loop {
            tokio::select! {
                _ = self.cancel.cancelled() => return false,
                _ = tokio::time::sleep_until(deadline) => return true,
                event = self.events.recv() => match self.classify(event) {
                    Next::Relevant => deadline = Instant::now() + debounce,
                    Next::Ignore => {}
                    // Read now; the main loop notices the closed channel afterwards.
                    Next::Closed => return true,
                },
            }
        }
    }

    /// Reads the file until it is non-empty, valid JSON5 or the retry window ends. `None`:
    /// nothing to do (the file is gone or unreadable, or we were cancelled).
    async fn read_whole(&self) -> Option<String> {
        let started = Instant::now();
        loop {
            let src = match read_bounded(&self.path).await {
                Ok(src) => src,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    tracing::warn!(path = %self.path.display(), "config file was removed; keeping the config in force");
                    return None;
                }
                Err(e) => {
                    tracing::error!(path = %self.path.display(), error = %e, "cannot read config file; keeping the config in force");
                    return None;
                }
            };
            // An empty file is most likely one being rewritten (truncated, not yet written):
            // wait for content like for broken syntax; still empty after the window, it
            // means "all defaults".
            let map = SourceMap::new(&src);
            let complete = !map.is_blank() && parse_json5(&src, &map).is_ok();
            if complete || started.elapsed() >= SYNTAX_RETRY_WINDOW {
                return Some(src);
            }
            tokio::select! {
                _ = self.cancel.cancelled() => return None,
                _ = tokio::time::sleep(SYNTAX_RETRY_EVERY) => {}
            }
        }
    }

    async fn reload(&self) {
        let Some(src) = self.read_whole().await else {
            return;
        };
        // A panic in the parser would end this task and with it hot reload, silently:
        // contain it like any other invalid file (it would be a bug to fix, so say so).
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parse_config(&src, &*self.env)
        }));
        let Ok(parsed) = parsed else {
            tracing::error!(path = %self.path.display(), "the config parser panicked on this file (a bug); keeping the config in force");
            return;
        };
        let new = match parsed {
            Ok(new) => new,
            Err(errors) => {
                for e in &errors {
                    tracing::error!(path = %self.path.display(), "{e}");
                }
                tracing::error!(
                    path = %self.path.display(),
                    errors = errors.len(),
                    "config file is invalid; keeping the config in force"
                );
                return;
            }
        };
        let current = Arc::clone(&self.tx.borrow());
        let plan = plan_reload(&current, &new);
        match current.gateway.reload.mode {
            ReloadMode::Hybrid | ReloadMode::Hot => {
                if !plan.restart_required.is_empty() {
                    tracing::warn!(keys = ?plan.restart_required, "config changes need a restart to take effect");
                }
                if plan.changed.is_empty() {
                    tracing::debug!("config file changed; nothing to apply");
                } else {
                    tracing::info!(changed = ?plan.changed, "config reloaded");
                    self.tx.send_replace(Arc::new(plan.config));
                }
            }
            ReloadMode::Restart | ReloadMode::Off => {
                if !plan.changed.is_empty() || !plan.restart_required.is_empty() {
                    tracing::warn!(
                        changed = ?plan.changed,
                        restart_required = ?plan.restart_required,
                        "config file changed; gateway.reload.mode does not apply changes live, restart required"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
