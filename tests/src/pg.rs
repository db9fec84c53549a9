//! A throwaway PostgreSQL for tests: `initdb` into a temp dir, the server on 127.0.0.1 at an
//! unused port (its Unix socket inside that dir), run as an unprivileged user, stopped and
//! removed afterwards — or, when `SWITCHBOARD_TEST_PG_URL` is set, a server of your own.
//!
//! Tests ask for a fresh database with [`TestDb::create`]. By default every database of a
//! test binary lives in one cluster started on first use ([`PgCluster::shared`]): `initdb`
//! costs about a second, a database a few milliseconds. A cluster of one's own is
//! [`PgCluster::start`].
//!
//! Cleanup does not depend on destructors running: each cluster has a watchdog, a small
//! shell in its own process group that waits for the test process to close a pipe and then
//! stops the server (`pg_ctl stop -m immediate`) and removes the dir. Dropping a
//! [`PgCluster`] closes the pipe and waits for the watchdog; a shared cluster (never dropped)
//! is cleaned up when the test binary exits, panics or is killed, because the kernel closes
//! the pipe then. The watchdog ignores SIGINT/SIGTERM/SIGHUP so a Ctrl-C of `cargo test`
//! does not stop it before its work.
//!
//! The server binaries come from Debian's `postgresql` package (`tests/setup.sh` installs
//! it). Tests usually run as root here and in CI, and `initdb` refuses root: then the
//! server runs as the package's `postgres` user (`runuser`), in a dir it owns.

mod binaries;
mod test_db;

use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use anyhow::{bail, Context as _};

use self::binaries::{Binaries, RunAs};
pub use self::test_db::{with_database, TestDb};

/// When set (to a URL of a role that may create databases, e.g.
/// `postgres://me:pw@127.0.0.1:5432/postgres`), tests use that server instead of starting
/// their own: each gets a uniquely named database in it, dropped afterwards.
pub const TEST_PG_URL_ENV: &str = "SWITCHBOARD_TEST_PG_URL";

/// The superuser `initdb` creates in a throwaway cluster.
const SUPERUSER: &str = "switchboard";
/// Attempts at starting the server; a retry covers losing the free port to another process.
const START_ATTEMPTS: usize = 3;
/// How long `pg_ctl start` waits for the server to accept connections (seconds).
const START_TIMEOUT_SECS: &str = "60";
/// How much of the server's log an error message quotes.
const LOG_TAIL: usize = 2_000;

/// The watchdog: waits for EOF on stdin (the test process closed the pipe or exited), then
/// runs the stop command (`$2…`) and removes the cluster's dir (`$1`).
const WATCHDOG: &str = r#"dir=$1; shift
trap '' HUP INT TERM
cat >/dev/null
"$@" >/dev/null 2>&1
rm -rf -- "$dir""#;

/// A running throwaway cluster. Stopped and removed when dropped (see the module docs for
/// how it is removed when it is not).
pub struct PgCluster {
    dir: PathBuf,
    port: u16,
    password: String,
    watchdog: Mutex<Option<Child>>,
}

impl PgCluster {
    /// The cluster shared by every test of this test binary, started on first use. Blocks
    /// while it starts (about a second); from async code call it through `spawn_blocking`
    /// or use [`TestDb::create`].
    pub fn shared() -> anyhow::Result<&'static PgCluster> {
        static SHARED: OnceLock<Result<PgCluster, String>> = OnceLock::new();
        match SHARED.get_or_init(|| PgCluster::start().map_err(|e| format!("{e:#}"))) {
            Ok(cluster) => Ok(cluster),
            Err(e) => bail!("the shared PostgreSQL test cluster did not start: {e}"),
        }
    }

    /// `initdb` and start a cluster of one's own (blocking, about a second).
    pub fn start() -> anyhow::Result<PgCluster> {
        let bin = Binaries::find()?;
        let run_as = RunAs::for_this_process()?;
        let dir = std::env::temp_dir().join(format!("sb-pg-{}", uuid::Uuid::new_v4().simple()));
        if dir.to_string_lossy().contains(['\'', '"', ' ', '\\']) {
            bail!(
                "the temp dir {} holds a quote, space or backslash; pg_ctl passes it through a shell",
                dir.display()
            );
        }
        create_private_dir(&dir, &run_as)?;
        let password = uuid::Uuid::new_v4().simple().to_string();
        let mut cluster = PgCluster {
            dir,
            port: 0,
            password,
            watchdog: Mutex::new(None),
        };
        // The watchdog first: from here on, however this function ends, the dir goes.
        let stop = run_as.command(&bin.pg_ctl);
        let watchdog = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("sh")
            .arg(&cluster.dir)
            .arg(stop.get_program())
            .args(stop.get_args())
            .arg("-D")
            .arg(cluster.data())
            .args(["stop", "-m", "immediate", "-w"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .context("cannot start the cluster's watchdog (sh)")?;
        *cluster
            .watchdog
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()) = Some(watchdog);

        cluster.initdb(&bin, &run_as)?;
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            cluster.port = unused_port()?;
            match cluster.pg_ctl_start(&bin, &run_as) {
                Ok(()) => return Ok(cluster),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| anyhow::anyhow!("the server did not start")))
    }

    /// The port the server listens on (127.0.0.1 only).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's own dir (data, log, Unix socket). Gone once the cluster is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A URL of database `db` as the cluster's superuser.
    pub fn url(&self, db: &str) -> String {
        format!(
            "postgres://{SUPERUSER}:{}@127.0.0.1:{}/{db}",
            self.password, self.port
        )
    }

    /// The URL of the maintenance database `postgres` (for creating and dropping others).
    pub fn admin_url(&self) -> String {
        self.url("postgres")
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn initdb(&self, bin: &Binaries, run_as: &RunAs) -> anyhow::Result<()> {
        let pwfile = self.dir.join("pwfile");
        std::fs::write(&pwfile, &self.password)
            .with_context(|| format!("cannot write {}", pwfile.display()))?;
        run_as.chown(&pwfile)?;
        let out = run_as
            .command(&bin.initdb)
            .arg("-D")
            .arg(self.data())
            .args(["-U", SUPERUSER, "--pwfile"])
            .arg(&pwfile)
            // Password (SCRAM) over TCP, the way the gateway will connect; the Unix socket
            // sits in the cluster's private dir.
            .args(["--auth-host=scram-sha-256", "--auth-local=trust"])
            .args(["-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"])
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", bin.initdb.display()))?;
        let _ = std::fs::remove_file(&pwfile);
        if !out.status.success() {
            bail!(
                "initdb failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    fn pg_ctl_start(&self, bin: &Binaries, run_as: &RunAs) -> anyhow::Result<()> {
        let log = self.dir.join("server.log");
        // Durability off: a test cluster never outlives its tests.
        let options = format!(
            "-c listen_addresses=127.0.0.1 -c port={} -c unix_socket_directories='{}' \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            self.port,
            self.dir.display()
        );
        let out = run_as
            .command(&bin.pg_ctl)
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", START_TIMEOUT_SECS, "-o", &options, "start"])
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", bin.pg_ctl.display()))?;
        if out.status.success() {
            return Ok(());
        }
        let log = std::fs::read(&log).unwrap_or_default();
        let tail = String::from_utf8_lossy(&log[log.len().saturating_sub(LOG_TAIL)..]);
        bail!(
            "pg_ctl start failed ({}): {}{}\nserver log:\n{tail}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let watchdog = self
            .watchdog
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut watchdog) = watchdog {
            // EOF on its stdin: it stops the server and removes the dir; wait for that.
            drop(watchdog.stdin.take());
            if let Err(e) = watchdog.wait() {
                eprintln!("pg test cluster: cannot wait for the watchdog: {e}");
            }
        }
    }
}

/// The dir of a cluster: readable by its owner only, owned by the user the server runs as.
fn create_private_dir(dir: &Path, run_as: &RunAs) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    run_as.chown(dir)
}

/// A port nobody listens on right now (the OS's pick for 127.0.0.1:0).
fn unused_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot bind 127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests;
