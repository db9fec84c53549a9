//! Tests of the config watcher against real files in a temporary directory (real time,
//! every wait bounded).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

use super::*;

fn no_env() -> SharedEnv {
    Arc::new(|_: &str| None)
}

fn config_text(mode: &str, max_concurrent: u32) -> String {
    format!(
        "{{ gateway: {{ reload: {{ mode: '{mode}', debounce: '50ms' }} }},\n  agents: {{ defaults: {{ maxConcurrent: {max_concurrent} }} }} }}\n"
    )
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    rx: watch::Receiver<Arc<Config>>,
    cancel: CancellationToken,
    handle: JoinHandle<()>,
}

fn start(mode: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.json5");
    let text = config_text(mode, 2);
    std::fs::write(&path, &text).expect("write");
    let initial = parse_config(&text, &|_| None).expect("valid config");
    let (tx, rx) = watch::channel(Arc::new(initial));
    let cancel = CancellationToken::new();
    let handle = spawn_watcher(path.clone(), no_env(), tx, cancel.clone()).expect("watch");
    Fixture {
        _dir: dir,
        path,
        rx,
        cancel,
        handle,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

impl Fixture {
    /// The next config sent, within `secs` seconds.
    async fn next(&mut self, secs: u64) -> Arc<Config> {
        timeout(Duration::from_secs(secs), self.rx.changed())
            .await
            .expect("a new config within the time limit")
            .expect("sender alive");
        Arc::clone(&self.rx.borrow_and_update())
    }

    /// Asserts nothing is sent for `ms` milliseconds.
    async fn nothing_for(&mut self, ms: u64) {
        let got = timeout(Duration::from_millis(ms), self.rx.changed()).await;
        assert!(got.is_err(), "unexpected config: {:?}", self.rx.borrow());
    }

    async fn stop(self) {
        self.cancel.cancel();
        timeout(Duration::from_secs(1), self.handle)
            .await
            .expect("watcher exits promptly on cancel")
            .expect("watcher task did not panic");
    }
}

#[tokio::test]
async fn applies_valid_edits_and_keeps_config_on_invalid_ones() {
    let mut f = start("hybrid");

    write(&f.path, &config_text("hybrid", 3));
    assert_eq!(f.next(2).await.agents.defaults.max_concurrent, 3);

    // Valid JSON5, invalid config: logged, nothing sent.
    write(
        &f.path,
        "{ gateway: { reload: { debounce: '50ms' } }, agents: { defaults: { maxConcurrent: 5, bogus: 1 } } }",
    );
    f.nothing_for(1000).await;

    write(&f.path, &config_text("hybrid", 4));
    assert_eq!(f.next(2).await.agents.defaults.max_concurrent, 4);

    // An emptied, then half-written file is retried until the complete one is there.
    write(&f.path, "");
    tokio::time::sleep(Duration::from_millis(150)).await;
    write(&f.path, "{ agents: { defaults: { maxConc");
    tokio::time::sleep(Duration::from_millis(150)).await;
    write(&f.path, &config_text("hybrid", 5));
    assert_eq!(f.next(3).await.agents.defaults.max_concurrent, 5);

    // Saving by rename, the way editors do.
    let tmp = f.path.with_extension("tmp");
    write(&tmp, &config_text("hybrid", 6));
    std::fs::rename(&tmp, &f.path).expect("rename");
    assert_eq!(f.next(2).await.agents.defaults.max_concurrent, 6);

    // Only restart-required keys changed: nothing to apply, nothing sent.
    write(
        &f.path,
        "{ gateway: { port: 1, reload: { debounce: '50ms' } }, agents: { defaults: { maxConcurrent: 6 } } }",
    );
    f.nothing_for(600).await;

    // Deleting the file keeps the config in force.
    std::fs::remove_file(&f.path).expect("remove");
    f.nothing_for(600).await;
    assert_eq!(f.rx.borrow().agents.defaults.max_concurrent, 6);

    // Other files in the directory are ignored.
    write(
        &f.path.with_file_name("other.json5"),
        &config_text("hybrid", 9),
    );
    f.nothing_for(400).await;

    f.stop().await;
}

#[tokio::test]
async fn restart_mode_applies_nothing() {
    let mut f = start("restart");
    write(&f.path, &config_text("restart", 3));
    f.nothing_for(800).await;
    f.stop().await;
}

#[tokio::test]
async fn off_mode_only_waits_for_cancel() {
    let mut f = start("off");
    write(&f.path, &config_text("off", 3));
    f.nothing_for(500).await;
    f.stop().await;
}

#[tokio::test]
async fn missing_directory_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nope").join("config.json5");
    let (tx, _rx) = watch::channel(Arc::new(Config::default()));
    let err = spawn_watcher(path, no_env(), tx, CancellationToken::new()).expect_err("no dir");
    assert!(err.message.starts_with("cannot watch "), "{err}");
}

/// Catches: a config edit the parser cannot survive (thousands of levels of nesting
/// overflowed the stack and killed the daemon) or an oversized file read whole; the last
/// good config stays and later edits still apply.
#[tokio::test]
async fn deep_and_oversized_edits_are_refused_and_reload_lives_on() {
    let mut f = start("hybrid");
    let levels = 20_000;
    write(
        &f.path,
        &format!("{{ deep: {}{} }}", "[".repeat(levels), "]".repeat(levels)),
    );
    // Refused only after the half-written-file retry window (2 s).
    f.nothing_for(2_500).await;
    write(&f.path, &"x".repeat(crate::config::MAX_CONFIG_BYTES + 1));
    f.nothing_for(600).await;
    assert!(!f.handle.is_finished(), "the watcher is still running");
    write(&f.path, &config_text("hybrid", 7));
    assert_eq!(f.next(3).await.agents.defaults.max_concurrent, 7);
    f.stop().await;
}

/// Catches: `Instant + debounce` on the debounce in force (500 billion years panicked the
/// reload task at the first edit, silently ending hot reload).
#[tokio::test]
async fn a_huge_debounce_in_force_does_not_end_the_watcher() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.json5");
    write(&path, &config_text("hybrid", 2));
    let mut initial = Config::default();
    initial.gateway.reload.debounce = Duration::from_secs(500_000_000_000 * 31_557_600);
    let (tx, _rx) = watch::channel(Arc::new(initial));
    let cancel = CancellationToken::new();
    let handle = spawn_watcher(path.clone(), no_env(), tx, cancel.clone()).expect("watch");
    write(&path, &config_text("hybrid", 3));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!handle.is_finished(), "the watcher task ended");
    cancel.cancel();
    timeout(Duration::from_secs(1), handle)
        .await
        .expect("watcher exits promptly on cancel")
        .expect("watcher task did not panic");
}
