//! `exec` under bubblewrap (`agents.defaults.sandbox`): a sandboxed command cannot write
//! outside its workspace, cannot read the gateway's database, has no network, cannot
//! touch `.git/hooks`; `non-main` spares only the agent's main session; a missing
//! bubblewrap refuses the command instead of running it unsandboxed.
//!
//! These tests need bubblewrap that can create namespaces here (`tests/setup.sh` installs
//! it); when it cannot, they fail saying why rather than pass without proving anything.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, WsClient};

use crate::common::{chat, start};
use crate::tools_support::{call, workspace};

/// Panics (loudly) unless bubblewrap works on this machine.
fn require_bwrap() {
    let out = std::process::Command::new("bwrap")
        .args(["--unshare-all", "--ro-bind", "/", "/", "true"])
        .output();
    match out {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "bubblewrap cannot create namespaces on this host ({}): {} — the sandbox tests cannot prove anything here",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!("bubblewrap is not installed ({e}); run tests/setup.sh"),
    }
}

fn sandboxed(sandbox: Value) -> Value {
    json!({"agents": {"defaults": {"sandbox": sandbox}}, "tools": {"exec": {"security": "full"}}})
}

async fn exec(fake: &FakeModel, ws: &mut WsClient, trigger: &str, command: &str) -> Value {
    let r = call(
        fake,
        ws,
        trigger,
        "exec",
        &json!({"command": command}).to_string(),
    )
    .await;
    serde_json::from_str(&r).unwrap_or_else(|_| json!({"error": r}))
}

fn exit_code(r: &Value) -> i64 {
    r["exitCode"].as_i64().unwrap_or(-1)
}

async fn gateway(fake: &FakeModel, sandbox: Value) -> Gateway {
    start(fake, sandboxed(sandbox)).await
}

/// Writes land in the workspace only; the state dir (and its database) is not there;
/// `/usr` is read-only; `.git/hooks` is read-only; the network is gone (a port the test
/// listens on is unreachable). Catches: a sandbox that leaks the host's files, the
/// gateway's secrets in its database, hooks a command could plant, or the network.
#[tokio::test]
async fn a_sandboxed_command_is_confined_to_its_workspace_without_network() {
    require_bwrap();
    // Without curl the connection is never tried: the test would pass on silence.
    if !switchboard_testkit::harness::require(&["curl"], "the network check connects with it") {
        return;
    }
    let fake = FakeModel::start().await.unwrap();
    let gw = gateway(&fake, json!({"mode": "all"})).await;
    let ws_dir = workspace(&gw);
    std::fs::create_dir_all(ws_dir.join(".git/hooks")).unwrap();
    let state = gw.state_dir().canonicalize().unwrap();
    let db = state.join("data/switchboard.db");
    assert!(db.exists(), "the database is at {}", db.display());
    let mut ws = chat(&gw, "main").await;

    let r = exec(
        &fake,
        &mut ws,
        "s1",
        "echo hi > inside.txt && cat inside.txt",
    )
    .await;
    assert_eq!(
        (exit_code(&r), r["output"].as_str()),
        (0, Some("hi\n")),
        "{r}"
    );
    assert!(
        ws_dir.join("inside.txt").exists(),
        "workspace writes reach the host"
    );

    // The state dir is not mounted: the write fails, or lands in the sandbox's private
    // /tmp when the state dir lives under /tmp (as in tests), never on the host.
    let escaped = state.join("escaped.txt");
    let r = exec(
        &fake,
        &mut ws,
        "s2",
        &format!("touch {}", escaped.display()),
    )
    .await;
    assert_eq!(r["status"], "exited", "{r}");
    assert!(!escaped.exists(), "no write outside the workspace: {r}");
    let r = exec(&fake, &mut ws, "s3", "touch /usr/escaped.txt").await;
    assert_ne!(exit_code(&r), 0, "{r}");
    assert!(!std::path::Path::new("/usr/escaped.txt").exists());

    let r = exec(
        &fake,
        &mut ws,
        "s4",
        &format!("cat {} | wc -c", db.display()),
    )
    .await;
    assert!(
        r["output"]
            .as_str()
            .unwrap_or_default()
            .contains("No such file"),
        "the database is out of sight: {r}"
    );

    let r = exec(&fake, &mut ws, "s5", "touch .git/hooks/pre-commit").await;
    assert_ne!(exit_code(&r), 0, "{r}");
    assert!(!ws_dir.join(".git/hooks/pre-commit").exists());

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let r = exec(
        &fake,
        &mut ws,
        "s6",
        &format!("curl -sS --max-time 3 http://127.0.0.1:{port}/"),
    )
    .await;
    assert_ne!(exit_code(&r), 0, "{r}");
    assert!(
        listener.accept().is_err(),
        "nothing reached the test's port from the sandbox"
    );
    fake.assert_no_violations();
}

/// `network: true` shares the host's network: the same connection gets through.
/// Catches: the network flag ignored.
#[tokio::test]
async fn network_true_lets_the_command_connect() {
    require_bwrap();
    // Without curl the connection is never tried: the test would pass on silence.
    if !switchboard_testkit::harness::require(&["curl"], "the network check connects with it") {
        return;
    }
    let fake = FakeModel::start().await.unwrap();
    let gw = gateway(&fake, json!({"mode": "all", "network": true})).await;
    let mut ws = chat(&gw, "main").await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accept = std::thread::spawn(move || listener.accept().is_ok());
    let r = exec(
        &fake,
        &mut ws,
        "n1",
        &format!("curl -sS --max-time 3 http://127.0.0.1:{port}/ ; echo tried"),
    )
    .await;
    assert!(accept.join().unwrap(), "the sandbox reached the port: {r}");
    fake.assert_no_violations();
}

/// The sandbox's `/dev` is bubblewrap's minimal one and nothing of the host's: six device
/// nodes (which work: `/dev/null` swallows, `/dev/urandom` and `/dev/zero` give bytes,
/// `/dev/full` refuses a write), the standard streams, a writable `/dev/shm`, a private
/// terminal instance (`pts`, `ptmx`). No disk, no kernel log. Catches: a `/dev` that lost
/// a node commands need, or one that shows the host's devices.
#[tokio::test]
async fn a_sandboxed_command_finds_the_devices_commands_use_and_no_others() {
    require_bwrap();
    let fake = FakeModel::start().await.unwrap();
    let gw = gateway(&fake, json!({"mode": "all"})).await;
    let mut ws = chat(&gw, "main").await;
    let r = exec(
        &fake,
        &mut ws,
        "d1",
        "echo gone > /dev/null && head -c 5 /dev/urandom | wc -c && head -c 3 /dev/zero | wc -c \
         && head -c 2 /dev/random | wc -c && { echo x > /dev/full 2>/dev/null || echo full; } \
         && echo out > /dev/stdout && echo shm > /dev/shm/x && cat /dev/shm/x \
         && ls /dev/fd/ > /dev/null && ls -A /dev | tr '\\n' ' '",
    )
    .await;
    assert_eq!(exit_code(&r), 0, "{r}");
    let output = r["output"].as_str().unwrap_or_default();
    assert_eq!(
        output,
        "5\n3\n2\nfull\nout\nshm\ncore fd full null ptmx pts random shm stderr stdin stdout tty urandom zero ",
        "{r}"
    );
    fake.assert_no_violations();
}

/// `non-main`: the agent's main session runs commands on the host; another session (a
/// web chat group) runs them sandboxed. Catches: the mode applied to the wrong sessions.
#[tokio::test]
async fn non_main_sandboxes_every_session_but_the_main_one() {
    require_bwrap();
    let fake = FakeModel::start().await.unwrap();
    let gw = gateway(&fake, json!({"mode": "non-main"})).await;
    let state = gw.state_dir().canonicalize().unwrap();
    let mut main = chat(&gw, "main").await;
    let r = exec(
        &fake,
        &mut main,
        "m1",
        &format!("touch {}/from-main.txt", state.display()),
    )
    .await;
    assert_eq!(exit_code(&r), 0, "{r}");
    assert!(state.join("from-main.txt").exists());
    let mut ops = chat(&gw, "ops").await;
    let r = exec(
        &fake,
        &mut ops,
        "m2",
        &format!("touch {}/from-ops.txt", state.display()),
    )
    .await;
    assert_eq!(r["status"], "exited", "{r}");
    assert!(!state.join("from-ops.txt").exists(), "sandboxed: {r}");
    fake.assert_no_violations();
}

/// Without any sandbox setting (the `auto` default) commands run in bubblewrap: in their
/// own PID namespace (the gateway's processes are invisible), without the state dir.
/// Catches: the default still running commands on the host.
#[tokio::test]
async fn by_default_commands_run_in_the_sandbox() {
    require_bwrap();
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"tools": {"exec": {"security": "full"}}})).await;
    let state = gw.state_dir().canonicalize().unwrap();
    let mut ws = chat(&gw, "main").await;
    let r = exec(
        &fake,
        &mut ws,
        "d1",
        &format!(
            "ls /proc | grep -c '^[0-9]'; test -e {} && echo state-visible; echo end",
            state.join("data").display()
        ),
    )
    .await;
    let out = r["output"].as_str().unwrap_or_default().to_string();
    let pids: usize = out
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .parse()
        .unwrap_or(usize::MAX);
    assert!(pids < 10, "a PID namespace of its own: {out}");
    assert!(!out.contains("state-visible"), "{out}");
    assert!(out.ends_with("end\n"), "{out}");
    let daemon = gw.pid().unwrap();
    let r = exec(
        &fake,
        &mut ws,
        "d2",
        &format!("test -e /proc/{daemon}/cmdline && echo seen; echo end"),
    )
    .await;
    assert_eq!(r["output"], "end\n", "the daemon's process is invisible");
    fake.assert_no_violations();
}

/// With bubblewrap unavailable (`sandbox.bwrap` pointing nowhere) a sandboxed command is
/// refused with a clear error and never runs. Catches: falling back to running it
/// unsandboxed.
#[tokio::test]
async fn without_bubblewrap_a_sandboxed_command_is_refused() {
    let fake = FakeModel::start().await.unwrap();
    let gw = gateway(
        &fake,
        json!({"mode": "all", "bwrap": "/nonexistent/switchboard-test/bwrap"}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "b1",
        "exec",
        &json!({"command": "touch ran.txt"}).to_string(),
    )
    .await;
    assert!(
        r.contains("must run in the sandbox") && r.contains("cannot be started"),
        "{r}"
    );
    assert!(!workspace(&gw).join("ran.txt").exists(), "not run");
    fake.assert_no_violations();
}

/// Host processes whose command line is exactly `cmdline` (NUL-separated words).
fn processes_running(words: &[&str]) -> usize {
    let want: Vec<u8> = words
        .iter()
        .flat_map(|w| [w.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want))
        .count()
}

/// A sandboxed command that forks a sleeper and times out leaves nothing behind: the
/// whole group (bubblewrap and everything in its namespace) is killed. Catches: the
/// sandbox escaping the job's process-group kill (e.g. `--new-session`).
#[tokio::test]
async fn a_timed_out_sandboxed_command_leaves_no_orphan() {
    require_bwrap();
    let fake = FakeModel::start().await.unwrap();
    let gw = gateway(&fake, json!({"mode": "all"})).await;
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "o1",
        "exec",
        &json!({"command": "sleep 3171 & sleep 3172", "timeoutSeconds": 1}).to_string(),
    )
    .await;
    assert!(r.contains("timed") || r.contains("timeout"), "{r}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while processes_running(&["sleep", "3171"]) + processes_running(&["sleep", "3172"]) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "a sleeper survived: {r}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    fake.assert_no_violations();
}
