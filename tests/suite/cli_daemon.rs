//! `switchboard status`, `sessions`, `subagents` and `send` against a running daemon:
//! tables for people, `--json` for scripts, exit 69 when no daemon answers and 77 when
//! it refuses the token.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};

use crate::cli_config::run;
use crate::common::{config_for, free_port, merge, start, BIN, WAIT};
use crate::subagents::spawn_call;

/// `switchboard ARGS --url <the daemon>`.
async fn ask(gw: &Gateway, args: &[&str]) -> (i32, String, String) {
    run(gw.command().args(args).arg("--url").arg(gw.base_url())).await
}

/// `status` finds the daemon from the config alone (bind + port + token) and prints its
/// lanes; with no daemon it exits 69, with a wrong token 77. (Catches: a client that
/// ignores the config's address or token, or exits 1 for everything.)
#[tokio::test]
async fn status_reads_address_and_token_from_the_config_and_exits_69_or_77() {
    let fake = FakeModel::start().await.unwrap();
    let port = free_port();
    let mut cfg: Value = serde_json::from_str(&config_for(&fake, json!({}))).unwrap();
    merge(
        &mut cfg,
        &json!({"gateway": {"port": port, "auth": {"token": "tok-123"}}}),
    );
    let gw = GatewayBuilder::new(BIN)
        .config(cfg.to_string())
        .start()
        .await
        .unwrap();

    let (code, stdout, stderr) = run(gw
        .command()
        .arg("status")
        .arg("--config")
        .arg(gw.config_path()))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("at http://127.0.0.1:{port}")),
        "{stdout}"
    );
    let lane_line = stdout
        .lines()
        .find(|l| l.starts_with("main "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(
        lane_line.split_whitespace().collect::<Vec<_>>(),
        ["main", "0", "4", "0"]
    );

    let (code, stdout, _) = run(gw
        .command()
        .args(["status", "--json", "--config"])
        .arg(gw.config_path()))
    .await;
    assert_eq!(code, 0);
    let status: Value = serde_json::from_str(&stdout).unwrap();
    let main = status["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "main")
        .unwrap();
    assert_eq!(main["capacity"], 4);
    assert_eq!(status["pid"], json!(gw.pid().unwrap()));

    let (code, _, stderr) = run(gw
        .command()
        .args(["status", "--token", "wrong", "--config"])
        .arg(gw.config_path()))
    .await;
    assert_eq!(code, 77, "{stderr}");
    assert!(stderr.contains("refused the token"), "{stderr}");

    // No config at hand (another machine): the address and token from the environment.
    let (code, stdout, stderr) = run(gw
        .command()
        .env("SWITCHBOARD_URL", gw.base_url())
        .env("SWITCHBOARD_TOKEN", "tok-123")
        .args(["status", "--json", "--config", "/nonexistent/config.json5"]))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap()["pid"],
        json!(gw.pid().unwrap())
    );

    let nobody = format!("http://127.0.0.1:{}", free_port());
    let (code, _, stderr) = run(gw.command().args(["status", "--url", &nobody])).await;
    assert_eq!(code, 69, "{stderr}");
    assert!(stderr.contains("the daemon is not running"), "{stderr}");
    let (code, _, _) = run(gw.command().args(["sessions", "list", "--url", &nobody])).await;
    assert_eq!(code, 69);
}

/// `send --wait` prints the reply; `sessions list` and `sessions show` then show the
/// session and its messages, as a table and as JSON. (Catches: a key not escaped in the
/// URL, the transcript cut wrong, `--json` printing a table.)
#[tokio::test]
async fn send_then_list_and_show_sessions() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let (code, stdout, stderr) =
        ask(&gw, &["send", "agent:main:main", "hello there", "--wait"]).await;
    assert_eq!(
        (code, stdout.as_str()),
        (0, "echo: hello there\n"),
        "{stderr}"
    );
    let (code, stdout, _) = ask(&gw, &["send", "agent:main:main", "and again"]).await;
    assert_eq!(code, 0);
    assert!(stdout.starts_with("accepted (run "), "{stdout}");

    let (code, stdout, stderr) = ask(&gw, &["sessions", "list"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("KEY "), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("agent:main:main ") && l.contains(" main ")),
        "{stdout}"
    );
    let (_, stdout, _) = ask(&gw, &["sessions", "list", "--json"]).await;
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["sessions"][0]["sessionKey"], "agent:main:main");

    fake.wait_for_requests(2, WAIT).await.unwrap();
    let (code, stdout, _) = ask(
        &gw,
        &["sessions", "show", "agent:main:main", "--limit", "2"],
    )
    .await;
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].contains("] user: and again")
            || lines[0].contains("] assistant: echo: hello there"),
        "{stdout}"
    );
    let (code, _, stderr) = ask(&gw, &["sessions", "show", "agent:main:nobody"]).await;
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no session with key `agent:main:nobody`"),
        "{stderr}"
    );
    fake.assert_no_violations();
}

/// `subagents list|info|log|stop` on a live child: listed with its label, found by an id
/// prefix, its transcript shown, stopped. (Catches: prefixes not resolved, the log of
/// the wrong session, stop not reaching the run.)
#[tokio::test]
async fn subagents_list_info_log_and_stop() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "start one",
        Step::ToolCalls(vec![spawn_call("worker alpha", json!({"label": "alpha"}))]),
    );
    fake.push_for("start one", Step::text("spawned"));
    fake.push_for("worker alpha", Step::Hang);
    let gw = start(&fake, json!({})).await;
    let (code, stdout, stderr) =
        ask(&gw, &["send", "agent:main:main", "start one", "--wait"]).await;
    assert_eq!((code, stdout.as_str()), (0, "spawned\n"), "{stderr}");
    fake.wait_for_requests(3, WAIT).await.unwrap();

    let (code, stdout, stderr) = ask(&gw, &["subagents", "list", "--json"]).await;
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let run_id = v["subagents"][0]["runId"].as_str().unwrap().to_string();
    let prefix = &run_id[..8];
    let (_, stdout, _) = ask(
        &gw,
        &["subagents", "list", "--requester", "agent:main:main"],
    )
    .await;
    let row = stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        row.contains(" running ") && row.contains(" alpha ") && row.contains("agent:main:main"),
        "{row}"
    );

    let (code, stdout, stderr) = ask(&gw, &["subagents", "info", prefix]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("runId") && l.ends_with(&run_id)),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("task") && l.ends_with("worker alpha")),
        "{stdout}"
    );

    let (code, stdout, _) = ask(&gw, &["subagents", "log", prefix]).await;
    assert_eq!(code, 0);
    assert!(
        stdout.contains("] user: ") && stdout.contains("worker alpha"),
        "{stdout}"
    );

    let (code, stdout, stderr) = ask(&gw, &["subagents", "stop", prefix]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, format!("stopped {run_id}\n"));
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let (_, stdout, _) = ask(&gw, &["subagents", "info", &run_id, "--json"]).await;
        let row: Value = serde_json::from_str(&stdout).unwrap();
        if row["status"] != "running" && row["status"] != "queued" {
            assert_eq!(row["status"], "cancelled", "{row}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never stopped: {row}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (code, _, stderr) = ask(&gw, &["subagents", "info", "zzzz"]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("no sub-agent run zzzz"), "{stderr}");
}
