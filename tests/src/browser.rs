//! A minimal W3C WebDriver client that drives Debian's chromium through chromedriver, so the
//! end-to-end tests can use the web chat page the way a person would.
//!
//! Only the handful of commands the tests need are implemented: navigate, find elements, type,
//! click, read text, run a script, take a screenshot. Chromium and chromedriver are installed by
//! `tests/setup.sh`.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, Context as _};
use reqwest::Method;
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::task::JoinSet;
use tokio::time::Instant;

pub use self::wire::Element;
use self::wire::{command, locator, Session};

mod base64;
mod wire;

/// Debian's chromium binary (package `chromium`).
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Debian's chromedriver binary (package `chromium-driver`).
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long chromedriver may take to answer `GET /status` with `ready: true`.
const DRIVER_READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Upper bound for a single WebDriver command (a page load is one command).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// How often `wait_for_*` re-checks the page.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// How many chromedriver output lines are kept for error messages.
const DRIVER_LOG_LINES: usize = 200;
/// How long killing chromium may take before its profile dir is removed anyway.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// Attempts at starting chromedriver; a retry covers losing the free port to another process.
const LAUNCH_ATTEMPTS: usize = 3;

/// Special keys for [`Element::send_keys`] (WebDriver key codes).
pub mod keys {
    /// The Enter key (sends the message in the web chat).
    pub const ENTER: &str = "\u{E007}";
    /// Shift; held until the end of the `send_keys` call or until pressed again.
    pub const SHIFT: &str = "\u{E008}";
    /// Backspace.
    pub const BACKSPACE: &str = "\u{E003}";
}

/// A headless chromium driven through its own chromedriver process.
///
/// Call [`Browser::quit`] at the end of a test; dropping a `Browser` also kills chromedriver
/// (and with it the browser), just less politely.
pub struct Browser {
    session: Session,
    driver: Child,
    driver_log: Arc<Mutex<Vec<String>>>,
    /// Readers of chromedriver's stdout/stderr; aborted on drop.
    _readers: JoinSet<()>,
    /// The fresh chromium profile; removed on drop.
    profile: TempDir,
}

impl Browser {
    /// Starts chromedriver on a free 127.0.0.1 port and opens a headless chromium session.
    pub async fn launch() -> anyhow::Result<Browser> {
        for path in [CHROMEDRIVER, CHROMIUM] {
            if !Path::new(path).exists() {
                bail!("{path} not found: run tests/setup.sh to install chromium and chromedriver");
            }
        }
        let mut last_err = None;
        for _ in 0..LAUNCH_ATTEMPTS {
            match Self::try_launch().await {
                Ok(browser) => return Ok(browser),
                Err(err) => last_err = Some(err),
            }
        }
        Err(last_err.unwrap_or_else(|| anyhow!("chromedriver did not start")))
    }

    async fn try_launch() -> anyhow::Result<Browser> {
        let profile = tempfile::Builder::new()
            .prefix("switchboard-chromium-")
            .tempdir()
            .context("creating the chromium profile dir")?;
        let port = free_port()?;
        // chromedriver stays in our process group, so Ctrl-C on the test run reaches it and
        // chromium too; on drop, `kill_driver` takes care of both.
        let mut driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            // Chromium keeps a crash database under ~/.config/chromium whatever the flags say;
            // a HOME inside the throwaway profile keeps the developer's home untouched.
            .env("HOME", profile.path().join("home"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {CHROMEDRIVER}"))?;

        let driver_log = Arc::new(Mutex::new(Vec::new()));
        let mut readers = JoinSet::new();
        if let Some(out) = driver.stdout.take() {
            readers.spawn(collect_lines(out, driver_log.clone()));
        }
        if let Some(err) = driver.stderr.take() {
            readers.spawn(collect_lines(err, driver_log.clone()));
        }

        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(COMMAND_TIMEOUT)
            .build()
            .context("building the webdriver HTTP client")?;
        let base = format!("http://127.0.0.1:{port}");
        let log_text = |log: &Arc<Mutex<Vec<String>>>| lock(log).join("\n");

        // Wait until chromedriver answers `ready: true`.
        let deadline = Instant::now() + DRIVER_READY_TIMEOUT;
        loop {
            if let Some(status) = driver.try_wait()? {
                kill_driver(&mut driver, profile.path());
                bail!(
                    "chromedriver exited before it was ready ({status}); its output:\n{}",
                    log_text(&driver_log)
                );
            }
            let ready = command(&http, Method::GET, &format!("{base}/status"), None)
                .await
                .ok()
                .and_then(|v| v.get("ready").and_then(Value::as_bool))
                .unwrap_or(false);
            if ready {
                break;
            }
            if Instant::now() >= deadline {
                kill_driver(&mut driver, profile.path());
                bail!(
                    "chromedriver was not ready within {DRIVER_READY_TIMEOUT:?}; its output:\n{}",
                    log_text(&driver_log)
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        let caps = json!({
            "capabilities": {
                "alwaysMatch": {
                    "goog:chromeOptions": {
                        "binary": CHROMIUM,
                        "args": [
                            "--headless=new",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-quic",
                            "--no-first-run",
                            "--disable-background-networking",
                            "--disable-component-update",
                            "--disable-sync",
                            "--disable-dev-shm-usage",
                            "--window-size=1280,900",
                            format!("--user-data-dir={}", profile.path().display()),
                        ],
                    }
                }
            }
        });
        let created = command(&http, Method::POST, &format!("{base}/session"), Some(caps)).await;
        let id = match created
            .as_ref()
            .map(|c| c.get("sessionId").and_then(Value::as_str))
        {
            Ok(Some(id)) => id.to_owned(),
            Ok(None) | Err(_) => {
                kill_driver(&mut driver, profile.path());
                let answer = match created {
                    Ok(v) => format!("an answer without a sessionId: {v}"),
                    Err(err) => format!("{err:#}"),
                };
                bail!(
                    "creating a chromium session failed: {answer}; chromedriver output:\n{}",
                    log_text(&driver_log)
                );
            }
        };

        Ok(Browser {
            session: Session {
                http,
                url: format!("{base}/session/{id}"),
            },
            driver,
            driver_log,
            _readers: readers,
            profile,
        })
    }

    /// Navigates to `url` and waits for the page load to finish.
    pub async fn goto(&self, url: &str) -> anyhow::Result<()> {
        self.session
            .cmd(Method::POST, "/url", Some(json!({ "url": url })))
            .await
            .with_context(|| format!("navigating to {url}"))?;
        Ok(())
    }

    /// The URL of the current page.
    pub async fn current_url(&self) -> anyhow::Result<String> {
        let v = self.session.cmd(Method::GET, "/url", None).await?;
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("current url is not a string: {v}"))
    }

    /// The first element matching the CSS selector; an error if there is none.
    pub async fn find(&self, css: &str) -> anyhow::Result<Element> {
        let v = self
            .session
            .cmd(Method::POST, "/element", Some(locator(css)))
            .await
            .with_context(|| format!("finding `{css}`"))?;
        Element::from_value(&self.session, &v)
    }

    /// Every element matching the CSS selector, in document order (possibly none).
    pub async fn find_all(&self, css: &str) -> anyhow::Result<Vec<Element>> {
        let v = self
            .session
            .cmd(Method::POST, "/elements", Some(locator(css)))
            .await
            .with_context(|| format!("finding all `{css}`"))?;
        v.as_array()
            .ok_or_else(|| anyhow!("find_all `{css}`: expected an array, got {v}"))?
            .iter()
            .map(|e| Element::from_value(&self.session, e))
            .collect()
    }

    /// Runs `script` as the body of a function (use `return`; arguments are `arguments[i]`)
    /// and returns its result.
    pub async fn execute(&self, script: &str, args: Vec<Value>) -> anyhow::Result<Value> {
        self.session
            .cmd(
                Method::POST,
                "/execute/sync",
                Some(json!({ "script": script, "args": args })),
            )
            .await
            .context("executing a script")
    }

    /// Waits until an element matching `css` exists and returns it.
    pub async fn wait_for(&self, css: &str, timeout: Duration) -> anyhow::Result<Element> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(el) = self.find_all(css).await?.into_iter().next() {
                return Ok(el);
            }
            if Instant::now() >= deadline {
                bail!(
                    "timed out after {timeout:?} waiting for an element matching `{css}`; page messages:\n{}",
                    self.messages_text().await
                );
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// Polls every 100 ms until an element matching `css` has rendered text containing
    /// `contains`, and returns that element's whole text. On timeout the error names what the
    /// matching elements did contain and the text of the page's `#messages`.
    pub async fn wait_for_text(
        &self,
        css: &str,
        contains: &str,
        timeout: Duration,
    ) -> anyhow::Result<String> {
        const TEXTS: &str = "return Array.from(document.querySelectorAll(arguments[0]))\
                             .map(e => e.innerText ?? e.textContent ?? '');";
        let deadline = Instant::now() + timeout;
        loop {
            let texts = self.execute(TEXTS, vec![json!(css)]).await?;
            let texts: Vec<String> = serde_json::from_value(texts).context("element texts")?;
            if let Some(hit) = texts.iter().find(|t| t.contains(contains)) {
                return Ok(hit.clone());
            }
            if Instant::now() >= deadline {
                bail!(
                    "timed out after {timeout:?} waiting for `{css}` to contain {contains:?}; \
                     matching elements: {texts:?}; page messages:\n{}",
                    self.messages_text().await
                );
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// The rendered text of `#messages`, for error messages.
    async fn messages_text(&self) -> String {
        const SCRIPT: &str = "const m = document.getElementById('messages');\
                              return m ? m.innerText : '(the page has no #messages element)';";
        match self.execute(SCRIPT, vec![]).await {
            Ok(Value::String(s)) => s,
            Ok(other) => other.to_string(),
            Err(err) => format!("(could not read #messages: {err:#})"),
        }
    }

    /// Resizes the browser window (e.g. 390×844 to look at a phone-sized layout).
    pub async fn set_window_size(&self, width: u32, height: u32) -> anyhow::Result<()> {
        self.session
            .cmd(
                Method::POST,
                "/window/rect",
                Some(json!({ "width": width, "height": height })),
            )
            .await?;
        Ok(())
    }

    /// Saves a PNG screenshot of the viewport to `path`, creating parent directories.
    pub async fn screenshot(&self, path: impl AsRef<Path>) -> anyhow::Result<()> {
        let path = path.as_ref();
        let v = self.session.cmd(Method::GET, "/screenshot", None).await?;
        let b64 = v
            .as_str()
            .ok_or_else(|| anyhow!("screenshot is not a string"))?;
        let png = base64::decode(b64).context("decoding the screenshot")?;
        if let Some(dir) = path.parent() {
            tokio::fs::create_dir_all(dir).await?;
        }
        tokio::fs::write(path, png)
            .await
            .with_context(|| format!("writing {}", path.display()))
    }

    /// Everything chromedriver printed so far.
    pub fn driver_log(&self) -> Vec<String> {
        lock(&self.driver_log).clone()
    }

    /// Ends the session (which closes chromium) and stops chromedriver.
    pub async fn quit(mut self) -> anyhow::Result<()> {
        let ended = self.session.cmd(Method::DELETE, "", None).await;
        // Ending the session does not always end chromium, and the profile is thrown away
        // anyway, so whatever is left is killed right away.
        kill_driver(&mut self.driver, self.profile.path());
        let _ = tokio::time::timeout(COMMAND_TIMEOUT, self.driver.wait()).await;
        ended.map(drop).context("ending the webdriver session")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Not quit (a test failed or returned early): chromium would outlive chromedriver.
        kill_driver(&mut self.driver, self.profile.path());
    }
}

/// SIGKILLs chromium (every process started with our `--user-data-dir`) and chromedriver,
/// then waits (blocking, bounded) until chromium is gone so its profile dir can be removed
/// without a dying helper writing into it again. SIGKILL to chromedriver alone would orphan
/// chromium, which lives on.
///
/// `libc`/`nix` are not dependencies, so this reads `/proc` and runs the `kill` utility; it is
/// quick enough for `Drop` (chromium is gone within a few hundred milliseconds).
fn kill_driver(driver: &mut Child, profile: &Path) {
    let chromium = pids_using_profile(profile);
    if !chromium.is_empty() {
        let _ = std::process::Command::new("kill")
            .arg("-KILL")
            .args(chromium.iter().map(u32::to_string))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let _ = driver.start_kill();
    let deadline = std::time::Instant::now() + KILL_WAIT;
    while std::time::Instant::now() < deadline
        && !(chromium.iter().all(|&pid| is_dead(pid)) && pids_using_profile(profile).is_empty())
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    // `TempDir`'s own drop removes the profile once and ignores errors; a helper that was
    // still flushing (crashpad, a renderer in its last write) can make that one attempt fail
    // with "directory not empty". Remove it here, retrying until it is gone or time is up.
    let deadline = std::time::Instant::now() + KILL_WAIT;
    while profile.exists() {
        match std::fs::remove_dir_all(profile) {
            Err(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => break,
        }
    }
}

/// Whether `pid` is gone or a zombie all of whose threads have exited. (A zombie thread-group
/// leader can still have threads finishing their last writes.)
fn is_dead(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    if state != Some("Z") {
        return false;
    }
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(true, |tasks| tasks.count() <= 1)
}

/// Processes whose command line names `profile` (as `--user-data-dir=…` or in another flag,
/// such as crashpad's `--database=…`): chromium's main process and all its helpers (zombies
/// have an empty command line and do not count).
fn pids_using_profile(profile: &Path) -> Vec<u32> {
    let needle = profile.display().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            cmdline
                .split(|&b| b == 0)
                .any(|arg| contains(arg, needle.as_bytes()))
                .then_some(pid)
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

async fn collect_lines(stream: impl AsyncRead + Unpin, log: Arc<Mutex<Vec<String>>>) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut log = lock(&log);
        if log.len() >= DRIVER_LOG_LINES {
            log.remove(0);
        }
        log.push(line);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a reader task panicked mid-push; the lines are still usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
