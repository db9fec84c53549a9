//! Scheduled jobs end to end: a config job with a short `every` delivered to a web chat
//! headed with its name, `/cron` list/disable/run, the `cron` tool's `add` delivering to
//! the chat it was called from, and a job that came due while the daemon was down
//! running once after the restart.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, WsClient};

use crate::common::{chat, get_json, start, wait_outbox_sent, WAIT};
use crate::tools_support::{call, json as parse};

fn job(id: &str, every: &str) -> Value {
    json!({
        "id": id,
        "name": "Tick",
        "schedule": {"every": every},
        "message": "cron ping",
        "deliver": {"channel": "webchat", "chatId": "main"},
    })
}

/// The next message in `ws` that is a job's answer.
async fn next_job_answer(ws: &mut WsClient) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let m = ws.next_message(left).await.unwrap();
        if m.starts_with('⏰') {
            return m;
        }
    }
}

async fn cron_job(gw: &Gateway, id: &str) -> Value {
    let all = get_json(gw, "/api/cron").await;
    all["jobs"]
        .as_array()
        .and_then(|j| j.iter().find(|j| j["id"] == id).cloned())
        .unwrap_or(Value::Null)
}

/// Catches: a due job not run on the cron lane, its answer not delivered to `deliver` or
/// not headed with its name, or `/cron` not listing, disabling or running it.
#[tokio::test]
async fn a_config_job_runs_and_is_delivered_headed_with_its_name() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"cron": {"jobs": [job("tick", "1s")]}})).await;
    let mut ws = chat(&gw, "main").await;
    assert_eq!(next_job_answer(&mut ws).await, "⏰ Tick\n\necho: cron ping");
    let j = cron_job(&gw, "tick").await;
    assert_eq!(j["source"], "config");
    assert!(j["runs"].as_i64() >= Some(1), "{j}");
    let sessions = get_json(&gw, "/api/sessions").await;
    assert!(
        sessions.to_string().contains("agent:main:cron:tick"),
        "{sessions}"
    );
    ws.send_text("/cron disable tick").await.unwrap();
    let answer = loop {
        let m = ws.next_message(WAIT).await.unwrap();
        if !m.starts_with('⏰') {
            break m;
        }
    };
    assert!(
        answer.starts_with("Disabled: tick (Tick): every 1s, disabled"),
        "{answer}"
    );
    ws.send_text("/cron").await.unwrap();
    let list = ws.next_message(WAIT).await.unwrap();
    assert!(
        list.starts_with("Scheduled jobs:\ntick (Tick): every 1s, disabled, "),
        "{list}"
    );
    assert!(list.ends_with("[config]"), "{list}");
    let runs = cron_job(&gw, "tick").await["runs"].as_i64().unwrap();
    ws.send_text("/cron run tick").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "Job tick started.");
    assert_eq!(next_job_answer(&mut ws).await, "⏰ Tick\n\necho: cron ping");
    assert_eq!(cron_job(&gw, "tick").await["runs"].as_i64(), Some(runs + 1));
    fake.assert_no_violations();
}

/// The `cron` tool's `add` delivers to the chat it was called from; `remove` takes the
/// job away. (`cron.minInterval` is lowered so the job runs within the test.)
/// Catches: a tool-added job answering nowhere.
#[tokio::test]
async fn the_cron_tool_adds_a_job_for_this_chat() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({"cron": {"minInterval": "1s"}})).await;
    let mut ws = chat(&gw, "main").await;
    let r = call(
        &fake,
        &mut ws,
        "c1",
        "cron",
        r#"{"action": "add", "id": "mine", "name": "Mine", "schedule": {"every": "1s"}, "message": "from tool"}"#,
    )
    .await;
    assert_eq!(parse(&r)["status"], "added", "{r}");
    assert_eq!(next_job_answer(&mut ws).await, "⏰ Mine\n\necho: from tool");
    let j = cron_job(&gw, "mine").await;
    assert_eq!(j["source"], "tool");
    assert_eq!(
        j["job"]["deliver"],
        json!({"channel": "webchat", "chatId": "main"})
    );
    let r = call(
        &fake,
        &mut ws,
        "c2",
        "cron",
        r#"{"action": "remove", "id": "mine"}"#,
    )
    .await;
    assert_eq!(parse(&r)["status"], "removed", "{r}");
    assert_eq!(cron_job(&gw, "mine").await, Value::Null);
}

/// A job that came due (several times over) while the daemon was down runs once at the
/// restart, then keeps its schedule. Catches: a missed job never run, or run once per
/// missed tick.
#[tokio::test]
async fn a_job_due_during_downtime_runs_once_after_the_restart() {
    let fake = FakeModel::start().await.unwrap();
    let mut gw = start(&fake, json!({"cron": {"jobs": [job("tick", "3s")]}})).await;
    let mut ws = chat(&gw, "main").await;
    next_job_answer(&mut ws).await;
    wait_outbox_sent(&gw, 1).await;
    let before = cron_job(&gw, "tick").await["runs"].as_i64().unwrap();
    gw.kill().await.unwrap();
    // Down for more than three periods of the job.
    tokio::time::sleep(Duration::from_secs(10)).await;
    gw.restart().await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    let j = loop {
        let j = cron_job(&gw, "tick").await;
        if j["runs"].as_i64() > Some(before) {
            break j;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never ran again: {j}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert_eq!(j["runs"].as_i64(), Some(before + 1), "{j}");
    assert_eq!(j["skipped"].as_i64(), Some(0), "{j}");
    let next = j["nextRunAt"].as_i64().unwrap();
    let last = j["lastRunAt"].as_i64().unwrap();
    assert!(next > last, "{j}");
}

async fn cli(gw: &Gateway, args: &[&str]) -> (bool, String) {
    let out = crate::common::output(
        gw.command()
            .arg("cron")
            .args(args)
            .arg("--config")
            .arg(gw.config_path()),
    )
    .await;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text.trim().to_string())
}

/// `switchboard cron add|list|rm` beside the running daemon: the added job runs and is
/// delivered; a config job cannot be removed from the shell. Catches: the CLI writing a
/// job the daemon never sees, or removing the config's jobs.
#[tokio::test]
async fn the_cli_adds_lists_and_removes_jobs() {
    let fake = FakeModel::start().await.unwrap();
    let mut cfg_job = job("fromfile", "1h");
    cfg_job["deliver"] = Value::Null;
    let gw = start(&fake, json!({"cron": {"jobs": [cfg_job]}})).await;
    let mut ws = chat(&gw, "main").await;
    let (ok, out) = cli(
        &gw,
        &[
            "add",
            "shell",
            "--every",
            "1s",
            "--message",
            "from shell",
            "--name",
            "Shell",
            "--channel",
            "webchat",
            "--chat",
            "main",
        ],
    )
    .await;
    assert!(ok, "{out}");
    assert!(
        out.starts_with("added shell (Shell): every 1s, next "),
        "{out}"
    );
    assert_eq!(
        next_job_answer(&mut ws).await,
        "⏰ Shell\n\necho: from shell"
    );
    let (ok, out) = cli(&gw, &["list"]).await;
    assert!(ok, "{out}");
    assert!(out.contains("\nshell (Shell): every 1s, next "), "{out}");
    assert!(out.starts_with("fromfile (Tick): every 1h, next "), "{out}");
    let (ok, out) = cli(&gw, &["rm", "fromfile"]).await;
    assert!(!ok);
    assert_eq!(
        out,
        "the job `fromfile` comes from the config file (cron.jobs): change or remove it there"
    );
    let (ok, out) = cli(&gw, &["rm", "shell"]).await;
    assert!(ok, "{out}");
    assert_eq!(cron_job(&gw, "shell").await, Value::Null);
    let (ok, out) = cli(&gw, &["add", "bad", "--every", "500ms", "--message", "x"]).await;
    assert!(!ok);
    assert!(out.contains("`every` must be between 1s and"), "{out}");
}
