//! `exec` and `process` end to end: the workspace, the scrubbed environment, timeouts and
//! `/stop` killing whole process groups, background commands, and a flood of output.

use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::GatewayBuilder;

use crate::common::{chat, config_for, start, BIN, WAIT};
use crate::tools_support::{
    call, json, script, wait_dead, wait_done, wait_gone, wait_pid_file, workspace,
};

/// No approvals in these tests: every command may run, on the host (they follow the
/// command's processes by their host pids; the sandbox's own are `sandbox::*`).
fn full() -> serde_json::Value {
    json!({
        "tools": {"exec": {"security": "full", "env": {"FROM_CONFIG": "yes"}}},
        "agents": {"defaults": {"sandbox": {"mode": "off"}}}
    })
}

/// The command runs in the workspace with an environment built from scratch: the
/// provider key, the bot tokens and the gateway token the daemon holds never reach it;
/// `tools.exec.env` does. Catches: a command inheriting the daemon's environment.
#[tokio::test]
async fn commands_run_in_the_workspace_without_the_daemon_s_secrets() {
    let fake = FakeModel::start().await.unwrap();
    let gw = GatewayBuilder::new(BIN)
        .config(config_for(&fake, full()))
        .env("OPENAI_API_KEY", "sk-daemon-openai-secret")
        .env("TELEGRAM_BOT_TOKEN", "123456:telegram-secret")
        .env("DISCORD_BOT_TOKEN", "discord-secret-token")
        .env("SWITCHBOARD_TOKEN", "gateway-secret-token")
        .env("SOME_OTHER_VAR", "other-value")
        .start()
        .await
        .unwrap();
    let mut ws = chat_with_token(&gw, "gateway-secret-token").await;
    let r = json(
        &call(
            &fake,
            &mut ws,
            "x1",
            "exec",
            r#"{"command": "pwd; env; echo err >&2; exit 3"}"#,
        )
        .await,
    );
    assert_eq!(r["status"], "exited");
    assert_eq!(r["exitCode"], 3);
    assert!(
        r["durationMs"].as_u64().is_some_and(|ms| ms < 60_000),
        "{r}"
    );
    let out = r["output"].as_str().unwrap();
    let ws_dir = workspace(&gw).canonicalize().unwrap();
    assert!(out.starts_with(&format!("{}\n", ws_dir.display())), "{out}");
    assert!(
        out.contains("FROM_CONFIG=yes") && out.contains("TERM=dumb") && out.contains("PATH="),
        "{out}"
    );
    assert!(
        out.trim_end().ends_with("err"),
        "stderr comes in order: {out}"
    );
    for secret in [
        "sk-daemon-openai-secret",
        "telegram-secret",
        "discord-secret-token",
        "gateway-secret-token",
        "test-key",
        "other-value",
    ] {
        assert!(!out.contains(secret), "{secret} leaked: {out}");
    }
    fake.assert_no_violations();
}

/// A web chat socket for a daemon with a gateway token.
async fn chat_with_token(
    gw: &switchboard_testkit::harness::Gateway,
    token: &str,
) -> switchboard_testkit::harness::WsClient {
    let mut ws =
        switchboard_testkit::harness::WsClient::connect_with_bearer(&gw.ws_url("main"), token)
            .await
            .unwrap();
    ws.next_of_type("hello", WAIT).await.unwrap();
    ws
}

/// A command that forks a sleeper and times out: the whole group is killed, the sleeper
/// included. Catches: killing only `sh` and leaving orphans behind.
#[tokio::test]
async fn a_timeout_kills_the_command_and_everything_it_started() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, full()).await;
    let mut ws = chat(&gw, "main").await;
    let r = json(
        &call(&fake, &mut ws, "t1", "exec", r#"{"command": "sleep 300 & echo $! > sleeper.pid; echo started; wait", "timeoutSeconds": 1}"#).await,
    );
    assert_eq!(r["status"], "timeout", "{r}");
    assert!(r["output"].as_str().unwrap().contains("started"), "{r}");
    let pid = wait_pid_file(&workspace(&gw).join("sleeper.pid")).await;
    wait_gone(pid).await;
    let r = call(
        &fake,
        &mut ws,
        "t2",
        "exec",
        r#"{"command": "true", "timeoutSeconds": 4000}"#,
    )
    .await;
    assert_eq!(
        r,
        "error: timeoutSeconds must be between 1 and 3600, got 4000"
    );
}

/// `/stop` while a command runs kills its group and ends the run.
/// Catches: a stopped run leaving its command running.
#[tokio::test]
async fn stop_kills_a_running_command_and_its_children() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, full()).await;
    let mut ws = chat(&gw, "main").await;
    fake.push_for(
        "s1",
        Step::ToolCalls(vec![ToolCall::new("exec", r#"{"command": "sleep 300 & echo $! > child.pid; sleep 300", "yieldMs": 600000, "timeoutSeconds": 600}"#)]),
    );
    ws.send_text("s1").await.unwrap();
    let pid = wait_pid_file(&workspace(&gw).join("child.pid")).await;
    ws.send_text("/stop").await.unwrap();
    let answer = ws.next_message(WAIT).await.unwrap();
    assert!(answer.starts_with("Stopped 1 run"), "{answer}");
    wait_gone(pid).await;
}

/// A background command: started, written to, polled, listed and killed with `process`;
/// a foreground command past `yieldMs` moves to the background and is polled to its end.
/// Catches: background work that cannot be managed or that outlives `process kill`.
#[tokio::test]
async fn background_commands_are_managed_with_process() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, full()).await;
    let mut ws = chat(&gw, "main").await;
    let r = json(
        &call(&fake, &mut ws, "p1", "exec", r#"{"command": "echo $$ > bg.pid; echo ready; read line; echo got $line; sleep 300", "background": true}"#).await,
    );
    assert_eq!(r["status"], "running", "{r}");
    let id = r["sessionId"].as_str().unwrap().to_string();
    let pid = wait_pid_file(&workspace(&gw).join("bg.pid")).await;
    let r = json(
        &call(
            &fake,
            &mut ws,
            "p2",
            "process",
            &json!({"action": "write", "sessionId": id, "data": "hello\n"}).to_string(),
        )
        .await,
    );
    assert_eq!(r["written"], 6);
    // Poll until the answer to the input shows.
    let mut seen = String::new();
    for i in 0..100 {
        let r = json(
            &call(
                &fake,
                &mut ws,
                &format!("p3-{i}"),
                "process",
                &json!({"action": "poll", "sessionId": id}).to_string(),
            )
            .await,
        );
        assert_eq!(r["status"], "running");
        seen.push_str(r["newOutput"].as_str().unwrap());
        if seen.contains("got hello") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        seen.contains("ready") && seen.contains("got hello"),
        "{seen}"
    );
    // `log` gives all the output kept, what `poll` handed out already included.
    let r = json(
        &call(
            &fake,
            &mut ws,
            "p3-log",
            "process",
            &json!({"action": "log", "sessionId": id}).to_string(),
        )
        .await,
    );
    assert_eq!(r["status"], "running", "{r}");
    let log = r["output"].as_str().unwrap();
    assert!(log.contains("ready") && log.contains("got hello"), "{r}");
    let r = json(&call(&fake, &mut ws, "p4", "process", r#"{"action": "list"}"#).await);
    assert_eq!(r["processes"][0]["sessionId"], id.as_str());
    let r = json(
        &call(
            &fake,
            &mut ws,
            "p5",
            "process",
            &json!({"action": "kill", "sessionId": id}).to_string(),
        )
        .await,
    );
    assert_eq!(r["status"], "killed", "{r}");
    wait_gone(pid).await;
    let r = call(
        &fake,
        &mut ws,
        "p6",
        "process",
        &json!({"action": "poll", "sessionId": id}).to_string(),
    )
    .await;
    assert!(r.starts_with("error: no background command"), "{r}");

    let r = json(
        &call(
            &fake,
            &mut ws,
            "y1",
            "exec",
            r#"{"command": "sleep 1; echo late", "yieldMs": 100}"#,
        )
        .await,
    );
    assert_eq!(r["status"], "running", "{r}");
    let id = r["sessionId"].as_str().unwrap().to_string();
    let mut end = serde_json::Value::Null;
    for i in 0..100 {
        let r = json(
            &call(
                &fake,
                &mut ws,
                &format!("y2-{i}"),
                "process",
                &json!({"action": "poll", "sessionId": id}).to_string(),
            )
            .await,
        );
        if r["status"] == "finished" {
            end = r;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(end["end"]["exitCode"], 0, "{end}");
    assert!(end["newOutput"].as_str().unwrap().contains("late"), "{end}");
}

/// VmRSS of a process, in kB.
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A command printing 100 MB gets a bounded answer (head and tail, the cut said) and the
/// daemon's memory stays under 100 MB meanwhile. Catches: buffering a command's whole
/// output.
#[tokio::test]
async fn a_flood_of_output_is_cut_and_memory_stays_bounded() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, full()).await;
    let pid = gw.pid().unwrap();
    let mut ws = chat(&gw, "main").await;
    script(
        &fake,
        "f1",
        "exec",
        r#"{"command": "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo THE-END", "timeoutSeconds": 120}"#,
    );
    ws.send_text("f1").await.unwrap();
    let mut peak = 0;
    let done = wait_done(&mut ws, "f1", Duration::from_secs(120));
    tokio::pin!(done);
    loop {
        tokio::select! {
            _ = &mut done => break,
            _ = tokio::time::sleep(Duration::from_millis(20)) => peak = peak.max(rss_kb(pid)),
        }
    }
    peak = peak.max(rss_kb(pid));
    let r = json(&crate::tools_support::tool_result(&fake, "f1"));
    let out = r["output"].as_str().unwrap();
    assert!(out.len() < 70 * 1024, "{}", out.len());
    assert!(
        out.contains("bytes of output cut") && out.trim_end().ends_with("THE-END"),
        "{}",
        &out[out.len() - 200..]
    );
    assert!(
        peak > 0 && peak < 100 * 1024,
        "daemon RSS peaked at {peak} kB"
    );
}

/// The run timeout kills a foreground command's group; a shutdown kills background
/// commands. Catches: commands outliving the run or the daemon.
#[tokio::test]
async fn the_run_timeout_and_shutdown_kill_commands() {
    let fake = FakeModel::start().await.unwrap();
    let mut cfg = full();
    cfg["agents"]["defaults"]["timeout"] = json!("1s");
    cfg["gateway"] = json!({"shutdownGrace": "200ms"});
    let mut gw = start(&fake, cfg).await;
    let mut ws = chat(&gw, "main").await;
    fake.push_for(
        "rt1",
        Step::ToolCalls(vec![ToolCall::new("exec", r#"{"command": "sleep 300 & echo $! > fg.pid; sleep 300", "yieldMs": 600000, "timeoutSeconds": 600}"#)]),
    );
    ws.send_text("rt1").await.unwrap();
    let fg = wait_pid_file(&workspace(&gw).join("fg.pid")).await;
    let m = ws.next_message(WAIT).await.unwrap();
    assert!(m.contains("timed out"), "{m}");
    wait_gone(fg).await;

    let r = json(
        &call(
            &fake,
            &mut ws,
            "rt2",
            "exec",
            r#"{"command": "sleep 300 & echo $! > bg.pid; sleep 300", "background": true}"#,
        )
        .await,
    );
    assert_eq!(r["status"], "running");
    let bg = wait_pid_file(&workspace(&gw).join("bg.pid")).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    wait_gone(bg).await;
}

/// A background command's shell dies with a daemon killed by SIGKILL (no shutdown code
/// runs): commands are spawned with the parent-death signal. Catches: a command left
/// running by a crashed daemon.
#[tokio::test]
async fn a_command_dies_with_a_sigkilled_daemon() {
    let fake = FakeModel::start().await.unwrap();
    let mut gw = start(&fake, full()).await;
    let mut ws = chat(&gw, "main").await;
    let r = json(
        &call(
            &fake,
            &mut ws,
            "k1",
            "exec",
            r#"{"command": "echo $$ > sh.pid; sleep 300", "background": true}"#,
        )
        .await,
    );
    assert_eq!(r["status"], "running");
    let sh = wait_pid_file(&workspace(&gw).join("sh.pid")).await;
    gw.kill().await.unwrap();
    wait_dead(sh).await;
}

/// Bad `exec` and `process` arguments each get a clear tool error and nothing runs.
/// Catches: a bad argument crashing the run or running something anyway.
#[tokio::test]
async fn bad_exec_arguments_get_clear_errors() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, full()).await;
    let mut ws = chat(&gw, "main").await;
    let cases: Vec<(&str, &str, String, &str)> = vec![
        (
            "q1",
            "exec",
            json!({"command": 5}).to_string(),
            "argument `command` must be a string, got 5",
        ),
        (
            "q2",
            "exec",
            json!({}).to_string(),
            "missing required string argument `command`",
        ),
        (
            "q3",
            "exec",
            json!({"command": "x".repeat(100_000)}).to_string(),
            "the command is 100000 bytes",
        ),
        (
            "q4",
            "exec",
            json!({"command": "touch a\u{0}b"}).to_string(),
            "NUL byte",
        ),
        (
            "q5",
            "exec",
            json!({"command": "true", "background": "yes"}).to_string(),
            "argument `background` must be a boolean",
        ),
        (
            "q6",
            "exec",
            json!({"command": "true", "workdir": "../"}).to_string(),
            "outside the agent's workspace",
        ),
        (
            "q7",
            "exec",
            json!({"command": "true", "workdir": "nope"}).to_string(),
            "workdir nope is not a folder",
        ),
        (
            "q8",
            "process",
            json!({"action": "poll", "sessionId": "nope"}).to_string(),
            "no background command `nope`",
        ),
        (
            "q9",
            "process",
            json!({"action": "dance", "sessionId": "x"}).to_string(),
            "unknown action `dance`",
        ),
        (
            "q10",
            "process",
            json!({"action": 3}).to_string(),
            "argument `action` must be a string",
        ),
    ];
    for (trigger, tool, args, want) in cases {
        let r = call(&fake, &mut ws, trigger, tool, &args).await;
        assert!(
            r.starts_with("error: ") && r.contains(want),
            "{trigger}: {}",
            r.chars().take(300).collect::<String>()
        );
    }
    fake.assert_no_violations();
}
