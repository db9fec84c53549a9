//! The environment every binary a test spawns runs with — the daemon and its CLI
//! commands alike (`config validate`, `pairing approve`, …) —, and running a command to
//! completion within a bound.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use tokio::process::Command;

/// Host variables the daemon would read; removed from the child's environment so nothing from
/// the developer's machine leaks into a test (set them with `GatewayBuilder::env` if needed).
/// The proxy variables are among them: reqwest honours them even for 127.0.0.1, so a host
/// proxy would sit between the daemon and the fakes (or refuse to reach them).
pub const SCRUBBED_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "SWITCHBOARD_CONFIG",
    "SWITCHBOARD_TOKEN",
    "SWITCHBOARD_STATE_DIR",
    "TELEGRAM_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "XDG_CONFIG_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
];

/// `<state_dir>/home`: the `$HOME` of every binary the harness runs for that state dir.
pub fn home_of(state_dir: &Path) -> PathBuf {
    state_dir.join("home")
}

/// `bin` (no arguments yet) as the harness runs it: in `state_dir` as its working
/// directory, with `SWITCHBOARD_STATE_DIR=<state_dir>`, `HOME=<state_dir>/home` (created),
/// `RUST_LOG=info,switchboard=debug`, `NO_COLOR=1`, without the host's [`SCRUBBED_ENV`],
/// stdin closed, stdout and stderr piped, killed when dropped. Use it for every CLI call
/// of a test (`Gateway::command` gives the one of a running gateway, with its overrides).
pub fn command(bin: impl AsRef<Path>, state_dir: &Path) -> Command {
    let home = home_of(state_dir);
    // A missing HOME only matters to the command that reads it; it reports that itself.
    let _ = std::fs::create_dir_all(&home);
    let mut cmd = Command::new(bin.as_ref());
    cmd.current_dir(state_dir);
    for key in SCRUBBED_ENV {
        cmd.env_remove(key);
    }
    cmd.env("SWITCHBOARD_STATE_DIR", state_dir)
        .env("HOME", &home)
        .env("RUST_LOG", "info,switchboard=debug")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Runs `cmd` to completion and collects its output; an error (and the process killed)
/// if it has not exited within `timeout`.
pub async fn output_within(cmd: &mut Command, timeout: Duration) -> anyhow::Result<Output> {
    cmd.kill_on_drop(true);
    let program = cmd.as_std().get_program().to_string_lossy().into_owned();
    tokio::time::timeout(timeout, cmd.output())
        .await
        .with_context(|| format!("`{program}` did not exit within {timeout:?}"))?
        .with_context(|| format!("running `{program}`"))
}
