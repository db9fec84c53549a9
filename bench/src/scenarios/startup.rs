//! Start → `/healthz` 200 with an existing state dir: the bench spawns the process itself and
//! polls `/healthz` every millisecond from its own loop, so the clock starts at `spawn`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{READY_PREFIX, SCRUBBED_ENV};

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, Api, Settings};
use crate::stats::Percentiles;

const NAME: &str = "startup";
/// Target for start → first `/healthz` 200.
const TARGET_MS: f64 = 10.0;
/// Turns run on the first start, so the restarts open a database that holds something.
const SEED_TURNS: usize = 20;
/// A start slower than this is a failure, not a sample.
const START_LIMIT: Duration = Duration::from_secs(10);
/// How long a SIGTERM may take before the process is killed.
const STOP_LIMIT: Duration = Duration::from_secs(15);
/// The poll period of `/healthz`.
const POLL: Duration = Duration::from_millis(1);

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let model = FakeModel::start_unchecked().await?;
    let state = tempfile::Builder::new()
        .prefix("switchboard-bench-startup-")
        .tempdir()?;
    let state_dir = state.path().to_owned();
    let model_url = model.base_url();

    // First start creates and migrates the database; a few turns give it rows.
    // One database for every restart, as one state dir: a restart finds its schema.
    let storage = rig::storage_url(settings).await?;
    let first = Daemon::start(settings, &state_dir, &model_url, &storage).await?;
    // The token the daemon made at its first start (none for a build from before).
    let token = std::fs::read_to_string(state_dir.join("gateway.token"))
        .ok()
        .map(|t| t.trim().to_owned());
    let api = Api::new(&format!("http://{}", first.addr), token.as_deref())?;
    for i in 0..SEED_TURNS {
        api.turn(
            &format!("agent:main:bench:seed:{}", i % 4),
            &format!("seed {i}"),
        )
        .await?;
    }
    first.stop().await?;

    let mut to_healthy = Vec::new();
    let mut to_ready_line = Vec::new();
    let mut self_reported = Vec::new();
    let mut to_exit = Vec::new();
    for i in 0..settings.restarts {
        eprintln!("  [startup] restart {}/{}", i + 1, settings.restarts);
        let daemon = Daemon::start(settings, &state_dir, &model_url, &storage).await?;
        to_healthy.push(daemon.healthy_after);
        if let Some(ready) = daemon.ready_after() {
            to_ready_line.push(ready);
        }
        let stopped = daemon.stop().await?;
        to_exit.push(stopped.exit_after);
        if let Some(ms) = stopped.startup_ms {
            self_reported.push(Duration::from_millis(ms));
        }
    }
    drop(model);

    let healthy = Percentiles::of(&to_healthy).ok_or_else(|| anyhow!("no restarts measured"))?;
    report.figures.extend(Figure::percentiles(
        NAME,
        "start -> /healthz 200",
        &healthy,
        Some(Target::AtMost(TARGET_MS)),
    ));
    let ready = Percentiles::of(&to_ready_line);
    if let Some(ready) = &ready {
        report.figures.push(Figure::info(
            NAME,
            "start -> ready line on stdout p50",
            ready.p50,
            "ms",
        ));
    }
    let own = Percentiles::of(&self_reported);
    if let Some(own) = &own {
        report.figures.push(Figure::info(
            NAME,
            "daemon's own startup_ms (log) p50",
            own.p50,
            "ms",
        ));
    }
    let exit = Percentiles::of(&to_exit);
    if let Some(exit) = &exit {
        report
            .figures
            .push(Figure::info(NAME, "SIGTERM -> exit p50", exit.p50, "ms"));
    }
    report.method = format!(
        "first start migrates a fresh SQLite state dir and runs {SEED_TURNS} turns, then {} restarts on that \
         state dir; each restart is timed from std::process::Command::spawn to the first 200 of GET /healthz, \
         polled by the bench every {} ms over a new TCP connection; stopped with SIGTERM between restarts",
        settings.restarts,
        POLL.as_millis()
    );
    report.details = json!({ "toHealthz": healthy, "toReadyLine": ready, "selfReportedStartup": own, "sigtermToExit": exit });
    Ok(())
}

/// One daemon process started by the bench.
struct Daemon {
    child: Child,
    addr: SocketAddr,
    healthy_after: Duration,
    /// When stdout's ready line arrived, relative to spawn.
    ready: mpsc::Receiver<Duration>,
    stderr_path: PathBuf,
}

struct Stopped {
    exit_after: Duration,
    /// `startup_ms` of the daemon's "switchboard ready" log line.
    startup_ms: Option<u64>,
}

impl Daemon {
    async fn start(
        settings: &Settings,
        state_dir: &Path,
        model_url: &str,
        storage: &Option<String>,
    ) -> anyhow::Result<Daemon> {
        let (settings, state_dir, model_url, storage) = (
            settings.clone(),
            state_dir.to_owned(),
            model_url.to_owned(),
            storage.clone(),
        );
        tokio::task::spawn_blocking(move || {
            Daemon::start_blocking(&settings, &state_dir, &model_url, storage.as_deref())
        })
        .await?
    }

    /// Writes the config with a port picked now, spawns, and polls `/healthz` until 200.
    fn start_blocking(
        settings: &Settings,
        state_dir: &Path,
        model_url: &str,
        storage: Option<&str>,
    ) -> anyhow::Result<Daemon> {
        let bin = &settings.bin;
        let port = free_port()?;
        let config_path = state_dir.join("config.json5");
        let config = rig::config(
            settings,
            &rig::DaemonConfig {
                model_url,
                port,
                main_cap: 64,
                subagent_cap: 8,
                storage,
            },
        );
        std::fs::write(&config_path, config)?;
        let home = state_dir.join("home");
        std::fs::create_dir_all(&home)?;
        let stderr_path = state_dir.join("stderr.log");
        let stderr = std::fs::File::create(&stderr_path)?;
        let mut cmd = Command::new(bin);
        cmd.arg("run")
            .arg("--config")
            .arg(&config_path)
            .current_dir(state_dir);
        for key in SCRUBBED_ENV {
            cmd.env_remove(key);
        }
        // Warnings only, plus the daemon's own "ready" line with its startup_ms.
        cmd.env("SWITCHBOARD_STATE_DIR", state_dir)
            .env("HOME", &home)
            .env("RUST_LOG", "warn,switchboard::app=info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let addr = SocketAddr::from(([127, 0, 0, 1], port));

        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        // A reader blocked on the pipe costs nothing until the ready line arrives; it keeps
        // draining stdout for the life of the process.
        let (tx, ready) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut sent = false;
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if !sent && line.starts_with(READY_PREFIX) {
                        let _ = tx.send(started.elapsed());
                        sent = true;
                    }
                }
            });
        }
        let healthy = poll_healthz(&mut child, addr, started);
        let healthy_after = started.elapsed();
        if let Err(error) = healthy {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            return Err(error.context(format!("daemon stderr:\n{}", rig::truncate(&log, 4000))));
        }
        Ok(Daemon {
            child,
            addr,
            healthy_after,
            ready,
            stderr_path,
        })
    }

    /// Time from spawn to the ready line as seen by the stdout thread (`None` if it never
    /// came: the daemon prints it before it serves, so that means stdout is broken).
    fn ready_after(&self) -> Option<Duration> {
        self.ready.recv_timeout(Duration::from_secs(2)).ok()
    }

    async fn stop(self) -> anyhow::Result<Stopped> {
        tokio::task::spawn_blocking(move || self.stop_blocking()).await?
    }

    fn stop_blocking(mut self) -> anyhow::Result<Stopped> {
        let pid = self.child.id();
        let started = Instant::now();
        // `libc`/`nix` are not dependencies; the `kill` utility sends the signal.
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()?;
        if !sent.success() {
            bail!("kill -TERM {pid} failed: {sent}");
        }
        loop {
            if let Some(status) = self.child.try_wait()? {
                let exit_after = started.elapsed();
                if !status.success() {
                    bail!("the daemon exited with {status} after SIGTERM");
                }
                let log = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
                let startup_ms = log
                    .split("startup_ms=")
                    .nth(1)
                    .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse().ok());
                return Ok(Stopped {
                    exit_after,
                    startup_ms,
                });
            }
            if started.elapsed() > STOP_LIMIT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("the daemon did not exit within {STOP_LIMIT:?} of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Polls `GET /healthz` every [`POLL`] until it answers 200; an error if the process exits
/// or [`START_LIMIT`] passes.
fn poll_healthz(child: &mut Child, addr: SocketAddr, started: Instant) -> anyhow::Result<()> {
    loop {
        if healthz_ok(addr) {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("the daemon exited before /healthz answered ({status})");
        }
        if started.elapsed() > START_LIMIT {
            bail!("/healthz did not answer 200 within {START_LIMIT:?}");
        }
        std::thread::sleep(POLL);
    }
}

/// One `GET /healthz` over a fresh connection; true on a 200.
fn healthz_ok(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(100)) else {
        return false;
    };
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

/// A loopback port free right now (bound, read, released).
fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}
