//! Exec approvals through the web chat's text form: a command off the allowlist waits for
//! `/approve` in the chat that owns the run; deny, allow-always (and `switchboard
//! approvals`), another chat's answer, `/stop`, the timeout, a restart while pending, and
//! a sub-agent's request in its requester's chat.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::{Gateway, WsClient};

use crate::common::{chat, start, BIN, WAIT};
use crate::tools_support::{json as parse, script, tool_result, wait_done, workspace};

/// Only `true` is allowed: `touch` needs approval.
fn allowlist() -> Value {
    json!({"gateway": {"shutdownGrace": "300ms"}, "tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}}})
}

fn touch(file: &str) -> String {
    json!({"command": format!("touch {file}")}).to_string()
}

/// Wait for the approval request and return its id.
async fn request_id(ws: &mut WsClient) -> (String, String) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let m = ws.next_message(left).await.unwrap();
        if let Some(rest) = m.strip_prefix("🔐 Approval needed [") {
            let id = rest.split(']').next().unwrap().to_string();
            return (id, m);
        }
    }
}

/// Collect messages until one starts with `prefix`.
async fn message_starting(ws: &mut WsClient, prefix: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let m = ws
            .next_message(left)
            .await
            .unwrap_or_else(|e| panic!("waiting for {prefix:?}: {e:#}"));
        if m.starts_with(prefix) {
            return m;
        }
    }
}

/// Wait for a message starting with `prefix` and this chat's `run.ended` event (in any
/// order); returns the message.
async fn message_and_run_end(ws: &mut WsClient, prefix: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    let (mut message, mut ended) = (None, false);
    while message.is_none() || !ended {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let f = ws.next_frame(left).await.unwrap();
        if f["type"] == "event" && f["event"]["type"] == "run.ended" {
            ended = true;
        }
        if f["type"] == "message" && f["text"].as_str().is_some_and(|t| t.starts_with(prefix)) {
            message = f["text"].as_str().map(str::to_string);
        }
    }
    message.unwrap_or_default()
}

/// The request names the agent, the folder and the command and gives the text form; an
/// answer from another chat changes nothing; `allow-once` from the owning chat runs the
/// command and the model gets its result. Catches: commands off the allowlist running
/// unasked, or any chat being able to approve.
#[tokio::test]
async fn a_command_off_the_allowlist_runs_once_approved_in_its_chat() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    let mut ws = chat(&gw, "main").await;
    let mut intruder = chat(&gw, "intruder").await;
    script(&fake, "a1", "exec", &touch("approved.txt"));
    ws.send_text("a1").await.unwrap();
    let (id, text) = request_id(&mut ws).await;
    let ws_dir = workspace(&gw).canonicalize().unwrap();
    assert!(
        text.contains("\nAgent: main\n")
            && text.contains(&format!("\nDirectory: `{}`\n", ws_dir.display())),
        "{text}"
    );
    assert!(
        text.contains("\nCommand:\n```\ntouch approved.txt\n```\n")
            && text.contains("touch is not in the allowlist"),
        "{text}"
    );
    assert!(
        text.contains(&format!("Reply /approve {id} allow-once|allow-always|deny")),
        "{text}"
    );
    assert!(
        !ws_dir.join("approved.txt").exists(),
        "not run before approval"
    );

    intruder
        .send_text(&format!("/approve {id} allow-once"))
        .await
        .unwrap();
    assert_eq!(
        intruder.next_message(WAIT).await.unwrap(),
        format!("No pending approval {id} in this chat.")
    );
    assert!(!ws_dir.join("approved.txt").exists());

    ws.send_text(&format!("/approve {id} allow-once"))
        .await
        .unwrap();
    let answer = message_starting(&mut ws, "✅").await;
    assert_eq!(
        answer,
        format!("✅ Approved {id} once: the command runs now.")
    );
    wait_done(&mut ws, "a1", WAIT).await;
    assert!(ws_dir.join("approved.txt").exists());
    let r = parse(&tool_result(&fake, "a1"));
    assert_eq!(
        (r["status"].as_str(), r["exitCode"].as_i64()),
        (Some("exited"), Some(0)),
        "{r}"
    );
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        format!("Approval {id} was already settled (allow-once).")
    );
    fake.assert_no_violations();
}

/// `switchboard approvals …` against the daemon's database.
async fn cli(gw: &Gateway, args: &[&str]) -> (bool, String) {
    let out = tokio::process::Command::new(BIN)
        .arg("approvals")
        .args(args)
        .arg("--config")
        .arg(gw.config_path())
        .env("SWITCHBOARD_STATE_DIR", gw.state_dir())
        .output()
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `deny` is told to the model as a denial (not an error to retry); `allow-always`
/// remembers the program, so the next command using it runs without asking, until
/// `switchboard approvals revoke`. Catches: allow-always not persisted, or not revocable.
#[tokio::test]
async fn deny_and_allow_always() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    let mut ws = chat(&gw, "main").await;
    let ws_dir = workspace(&gw);

    script(&fake, "d1", "exec", &touch("denied.txt"));
    ws.send_text("d1").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    assert_eq!(
        message_starting(&mut ws, "🚫").await,
        format!("🚫 Denied {id}: the command was not run.")
    );
    wait_done(&mut ws, "d1", WAIT).await;
    let r = parse(&tool_result(&fake, "d1"));
    assert_eq!(
        (r["status"].as_str(), r["reason"].as_str()),
        (Some("denied"), Some("denied by the user")),
        "{r}"
    );
    assert!(!ws_dir.join("denied.txt").exists());

    script(&fake, "w1", "exec", &touch("always.txt"));
    ws.send_text("w1").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    ws.send_text(&format!("/approve {id} allow-always"))
        .await
        .unwrap();
    let answer = message_starting(&mut ws, "✅").await;
    assert!(
        answer.contains("agent main may run") && answer.contains("touch without asking"),
        "{answer}"
    );
    wait_done(&mut ws, "w1", WAIT).await;
    assert!(ws_dir.join("always.txt").exists());

    script(&fake, "w2", "exec", &touch("again.txt"));
    ws.send_text("w2").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "done w2",
        "no second request"
    );
    assert!(ws_dir.join("again.txt").exists());

    let (ok, list) = cli(&gw, &["list"]).await;
    assert!(ok, "{list}");
    let line = list
        .lines()
        .find(|l| l.starts_with("main\t"))
        .unwrap_or_else(|| panic!("{list}"));
    let path = line.split('\t').nth(1).unwrap().to_string();
    assert!(path.ends_with("/touch"), "{list}");
    let (ok, out) = cli(&gw, &["revoke", &path]).await;
    assert!(ok && out.starts_with(&format!("revoked {path}")), "{out}");
    let (_, list) = cli(&gw, &["list"]).await;
    assert!(list.starts_with("no programs allowed for good"), "{list}");

    script(&fake, "w3", "exec", &touch("third.txt"));
    ws.send_text("w3").await.unwrap();
    request_id(&mut ws).await;
}

/// `/stop` cancels a pending request (a late answer changes nothing), and a request
/// nobody answers expires into a denial the chat is told about.
/// Catches: a stopped run's request still approvable; a run waiting forever.
#[tokio::test]
async fn stop_cancels_and_the_timeout_denies() {
    let fake = FakeModel::start().await.unwrap();
    let mut cfg = allowlist();
    cfg["tools"]["exec"]["approvalTimeout"] = json!("2s");
    let gw = start(&fake, cfg).await;
    let mut ws = chat(&gw, "main").await;

    fake.push_for(
        "s1",
        Step::ToolCalls(vec![ToolCall::new("exec", touch("stopped.txt"))]),
    );
    ws.send_text("s1").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    ws.send_text("/stop").await.unwrap();
    let stopped = message_and_run_end(&mut ws, "Stopped").await;
    assert!(stopped.starts_with("Stopped 1 run"), "{stopped}");
    ws.send_text(&format!("/approve {id} allow-once"))
        .await
        .unwrap();
    let m = ws.next_message(WAIT).await.unwrap();
    assert!(
        m.starts_with(&format!("Approval {id} was already settled (cancelled)")),
        "{m}"
    );
    assert!(!workspace(&gw).join("stopped.txt").exists());

    script(&fake, "t1", "exec", &touch("late.txt"));
    ws.send_text("t1").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    let note = message_starting(&mut ws, "⌛").await;
    assert!(
        note.starts_with(&format!("⌛ Approval {id} expired after 2s")),
        "{note}"
    );
    wait_done(&mut ws, "t1", WAIT).await;
    let r = parse(&tool_result(&fake, "t1"));
    assert_eq!(r["status"], "denied");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("tools.exec.approvalTimeout"),
        "{r}"
    );
}

/// A restart while a request is pending keeps it: the resumed run waits on the same
/// request (not a new one) and runs the command once approved.
/// Catches: a request lost, re-asked, or answered "interrupted" by a restart.
#[tokio::test]
async fn a_pending_request_survives_a_restart() {
    let fake = FakeModel::start().await.unwrap();
    let mut gw = start(&fake, allowlist()).await;
    let mut ws = chat(&gw, "main").await;
    script(&fake, "r1", "exec", &touch("restarted.txt"));
    ws.send_text("r1").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    gw.restart().await.unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text(&format!("/approve {id} allow-once"))
        .await
        .unwrap();
    assert_eq!(
        message_starting(&mut ws, "✅").await,
        format!("✅ Approved {id} once: the command runs now.")
    );
    wait_done(&mut ws, "r1", WAIT).await;
    assert!(workspace(&gw).join("restarted.txt").exists());
    let r = parse(&tool_result(&fake, "r1"));
    assert_eq!(r["exitCode"], 0, "{r}");
    let (_, list) = cli(&gw, &["list"]).await;
    assert!(!list.contains("pending"), "one request, answered: {list}");
    fake.assert_no_violations();
}

/// A sub-agent's request goes to its requester's chat and names the child's label; the
/// answer from there lets the child go on. Catches: a child's request posted nowhere (its
/// own session has no chat).
#[tokio::test]
async fn a_sub_agent_asks_in_its_requester_s_chat() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    let mut ws = chat(&gw, "main").await;
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![ToolCall::new(
            "sessions_spawn",
            json!({"task": "child-task please", "label": "builder"}).to_string(),
        )]),
    );
    fake.push_for("delegate", Step::text("spawned"));
    fake.push_for(
        "child-task",
        Step::ToolCalls(vec![ToolCall::new("exec", touch("child.txt"))]),
    );
    fake.push_for("child-task", Step::text("child finished"));
    ws.send_text("delegate").await.unwrap();
    let (id, text) = request_id(&mut ws).await;
    assert!(
        text.contains("\nAgent: main (sub-agent \"builder\")\n"),
        "{text}"
    );
    ws.send_text(&format!("/approve {id} allow-once"))
        .await
        .unwrap();
    message_starting(&mut ws, "✅").await;
    let announce = message_starting(&mut ws, "Status:").await;
    assert!(announce.starts_with("Status: success"), "{announce}");
    assert!(workspace(&gw).join("child.txt").exists());
}

/// A run started through the HTTP API has no chat to ask: a command needing approval is
/// not run and the model is told why. Catches: a request posted nowhere, waiting forever.
#[tokio::test]
async fn an_api_run_has_no_chat_to_ask() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    script(&fake, "api1", "exec", &touch("api.txt"));
    let r: Value = gw
        .http()
        .post(format!(
            "{}/api/sessions/agent:main:main/messages",
            gw.base_url()
        ))
        .json(&json!({"text": "api1", "wait": true}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["reply"], "done api1", "{r}");
    let result = tool_result(&fake, "api1");
    assert!(
        result.starts_with("error: this command needs approval, but the run has no chat to ask"),
        "{result}"
    );
    assert!(!workspace(&gw).join("api.txt").exists());
}

/// Harmless shell builtins run without asking, and may write files inside the
/// workspace through a redirection; a redirection outside it is asked about.
/// Catches: `echo … > ../file` (or into the gateway's state) writing unasked.
#[tokio::test]
async fn builtins_run_unasked_and_write_only_inside_the_workspace() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    let mut ws = chat(&gw, "main").await;
    script(
        &fake,
        "b1",
        "exec",
        &json!({"command": "cd . && echo hi > written.txt; true"}).to_string(),
    );
    ws.send_text("b1").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "done b1",
        "no approval asked"
    );
    assert_eq!(
        std::fs::read_to_string(workspace(&gw).join("written.txt")).unwrap(),
        "hi\n"
    );
    script(
        &fake,
        "b2",
        "exec",
        &json!({"command": "echo hi > ../outside.txt"}).to_string(),
    );
    ws.send_text("b2").await.unwrap();
    let (id, text) = request_id(&mut ws).await;
    assert!(
        text.contains("the redirection `> ../outside.txt` is outside the workspace"),
        "{text}"
    );
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    wait_done(&mut ws, "b2", WAIT).await;
    assert!(!gw.state_dir().join("outside.txt").exists());
}

/// The lines of the security report that ran a program, wrote a file or printed the
/// config without approval on the default config: each is asked about now, and denied,
/// nothing ran. Catches: any of them running unasked again through the real daemon.
#[tokio::test]
async fn the_reported_attack_lines_are_asked_about() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"gateway": {"shutdownGrace": "300ms"}})).await;
    let mut ws = chat(&gw, "main").await;
    let lines = [
        ": `: \\`touch F1\\``",
        "echo \"${x:-'$(touch F2)'}\"",
        "echo $(( '$(touch F3)' ))",
        "> F4",
        "test -v 'a[$(touch F5)]'",
        "unset 'a[$(touch F6)]'",
        "read 'a[$(touch F7)]' < /dev/null",
        "PS4='$(touch F8)'; set -x; true",
        "echo $'\\x41' && touch F9",
        "while IFS= read -r l; do echo \"$l\"; done < ~/.switchboard/config.json5",
    ];
    for (i, line) in lines.iter().enumerate() {
        let trigger = format!("a{i}");
        script(
            &fake,
            &trigger,
            "exec",
            &json!({"command": line}).to_string(),
        );
        ws.send_text(&trigger).await.unwrap();
        let (id, text) = request_id(&mut ws).await;
        assert!(
            text.contains("only plain command lines run unasked"),
            "{line}: {text}"
        );
        ws.send_text(&format!("/approve {id} deny")).await.unwrap();
        wait_done(&mut ws, &trigger, WAIT).await;
    }
    for i in 1..=9 {
        assert!(!workspace(&gw).join(format!("F{i}")).exists(), "F{i}");
    }
    fake.assert_no_violations();
}

/// Allow-always of a program that can run other code (`env`) stores the exact argument
/// list: the same command runs unasked after, another one with the same program is asked
/// about. Catches: `env` (or `git`, `sh`, …) allowed for good with any arguments.
#[tokio::test]
async fn allow_always_of_a_program_that_runs_code_keeps_its_arguments() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    let mut ws = chat(&gw, "main").await;
    let ws_dir = workspace(&gw);
    let env_touch = |f: &str| json!({"command": format!("env touch {f}")}).to_string();

    script(&fake, "e1", "exec", &env_touch("one.txt"));
    ws.send_text("e1").await.unwrap();
    let (id, text) = request_id(&mut ws).await;
    assert!(text.contains("can run other code"), "{text}");
    ws.send_text(&format!("/approve {id} allow-always"))
        .await
        .unwrap();
    wait_done(&mut ws, "e1", WAIT).await;
    assert!(ws_dir.join("one.txt").exists());

    script(&fake, "e2", "exec", &env_touch("one.txt"));
    ws.send_text("e2").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "done e2",
        "the same arguments run unasked"
    );

    script(&fake, "e3", "exec", &env_touch("two.txt"));
    ws.send_text("e3").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    wait_done(&mut ws, "e3", WAIT).await;
    assert!(!ws_dir.join("two.txt").exists());

    let (ok, list) = cli(&gw, &["list"]).await;
    assert!(ok, "{list}");
    assert!(
        list.lines()
            .any(|l| l.starts_with("main\t[\"") && l.contains("/env\",\"touch\",\"one.txt\"]")),
        "{list}"
    );
    fake.assert_no_violations();
}

/// A config allowlist entry may name argument patterns: `env true *` allows `env true …`
/// and nothing else of `env`. Catches: the patterns ignored (any arguments allowed).
#[tokio::test]
async fn config_entries_may_name_argument_patterns() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"tools": {"exec": {"allowlist": ["/usr/bin/env true *", "/bin/env true *"]}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    script(&fake, "p1", "exec", r#"{"command": "env true x y"}"#);
    ws.send_text("p1").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "done p1");
    script(&fake, "p2", "exec", r#"{"command": "env touch p.txt"}"#);
    ws.send_text("p2").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    wait_done(&mut ws, "p2", WAIT).await;
    assert!(!workspace(&gw).join("p.txt").exists());
    fake.assert_no_violations();
}

/// An executable script in the workspace, written where a test (or the agent) can put it.
fn workspace_program(gw: &Gateway, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = workspace(gw);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// With `id` allowed, a line that points `PATH` at the workspace (where a program of that
/// name waits) is asked about (an assignment or a `$` is outside the gate's grammar), not
/// run as "`id` is allowed"; denied, nothing ran.
/// Catches: `PATH=. id` or `export PATH=.; id` running the workspace's `id` unasked.
#[tokio::test]
async fn a_line_that_moves_path_is_asked_about() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(
        &fake,
        json!({"tools": {"exec": {"allowlist": ["/usr/bin/id", "/bin/id"]}}}),
    )
    .await;
    workspace_program(&gw, "id", "touch pwned");
    let mut ws = chat(&gw, "main").await;

    script(&fake, "i0", "exec", r#"{"command": "id -u"}"#);
    ws.send_text("i0").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "done i0",
        "id is allowed"
    );
    for (trigger, command) in [("i1", "PATH=. id"), ("i2", "export PATH=.:$PATH; id")] {
        script(
            &fake,
            trigger,
            "exec",
            &json!({"command": command}).to_string(),
        );
        ws.send_text(trigger).await.unwrap();
        let (id, text) = request_id(&mut ws).await;
        assert!(
            text.contains("only plain command lines run unasked"),
            "{text}"
        );
        ws.send_text(&format!("/approve {id} deny")).await.unwrap();
        wait_done(&mut ws, trigger, WAIT).await;
    }
    assert!(!workspace(&gw).join("pwned").exists());
    fake.assert_no_violations();
}

/// A program in the agent's workspace is asked about every time: allow-always runs it
/// once and remembers nothing. Catches: `./build.sh` allowed for good, after which the
/// agent rewrites it with `write` (which keeps its mode) and runs anything unasked.
#[tokio::test]
async fn a_workspace_program_is_asked_about_every_time() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, allowlist()).await;
    workspace_program(&gw, "build.sh", "touch \"built-$1\"");
    let mut ws = chat(&gw, "main").await;

    script(&fake, "b1", "exec", r#"{"command": "./build.sh one"}"#);
    ws.send_text("b1").await.unwrap();
    let (id, text) = request_id(&mut ws).await;
    assert!(
        text.contains("build.sh is in the agent's workspace"),
        "{text}"
    );
    ws.send_text(&format!("/approve {id} allow-always"))
        .await
        .unwrap();
    let answer = message_starting(&mut ws, "✅").await;
    assert!(answer.contains("no program to remember"), "{answer}");
    wait_done(&mut ws, "b1", WAIT).await;
    assert!(workspace(&gw).join("built-one").exists());

    script(&fake, "b2", "exec", r#"{"command": "./build.sh two"}"#);
    ws.send_text("b2").await.unwrap();
    let (id, _) = request_id(&mut ws).await;
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    wait_done(&mut ws, "b2", WAIT).await;
    assert!(!workspace(&gw).join("built-two").exists());
    let (_, list) = cli(&gw, &["list"]).await;
    assert!(list.starts_with("no programs allowed for good"), "{list}");
    fake.assert_no_violations();
}

/// Under the default `sandbox.mode` (`auto`) where bubblewrap cannot run, every command
/// is asked about, even a builtin; `sandbox.mode: "off"` set explicitly lets the
/// allowlist run it unasked again. Catches: commands running unasked and unsandboxed
/// because the sandbox silently fell away.
#[tokio::test]
async fn auto_without_bubblewrap_asks_about_every_command() {
    let fake = FakeModel::start().await.unwrap();
    let nowhere = "/nonexistent/switchboard-test/bwrap";
    let gw = start(
        &fake,
        json!({"agents": {"defaults": {"sandbox": {"bwrap": nowhere}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    script(&fake, "u1", "exec", r#"{"command": "echo hi"}"#);
    ws.send_text("u1").await.unwrap();
    let (id, text) = request_id(&mut ws).await;
    assert!(text.contains("bubblewrap does not work here"), "{text}");
    ws.send_text(&format!("/approve {id} deny")).await.unwrap();
    wait_done(&mut ws, "u1", WAIT).await;
    drop(gw);

    let gw = start(
        &fake,
        json!({"agents": {"defaults": {"sandbox": {"mode": "off", "bwrap": nowhere}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    script(&fake, "u2", "exec", r#"{"command": "echo hi"}"#);
    ws.send_text("u2").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "done u2");
    assert_eq!(parse(&tool_result(&fake, "u2"))["output"], "hi\n");
    fake.assert_no_violations();
}
