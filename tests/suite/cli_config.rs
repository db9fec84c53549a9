//! `switchboard config get|set|unset|print|schema` end to end: the real binary editing a
//! real file, against a running daemon that picks the edit up live.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;

use crate::common::{cli, get_text, output, start, WAIT};

const EXAMPLE: &str = include_str!("../../config.example.json5");

/// Exit code, stdout and stderr of a finished command.
pub(crate) async fn run(cmd: &mut tokio::process::Command) -> (i32, String, String) {
    let out = output(cmd).await;
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The lane capacity `/metrics` reports for `lane`.
async fn lane_capacity(gw: &switchboard_testkit::harness::Gateway, lane: &str) -> Option<u64> {
    let metrics = get_text(gw, "/metrics").await;
    let prefix = format!("switchboard_lane_capacity{{lane=\"{lane}\"}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|n| n.trim().parse().ok())
}

/// `config set` on a running daemon's file: only the value's bytes change, the write is
/// atomic, and the daemon applies it live; an invalid edit is refused with the key path
/// and line, and the file is left byte for byte. (Catches: the file rewritten from the
/// parsed value, a non-atomic write the watcher half-reads, an invalid edit written.)
#[tokio::test]
async fn set_on_a_running_daemon_applies_live_and_refuses_invalid_edits() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    assert_eq!(lane_capacity(&gw, "main").await, Some(4));
    let before = std::fs::read_to_string(gw.config_path()).unwrap();

    let (code, stdout, stderr) = run(gw
        .command()
        .args([
            "config",
            "set",
            "agents.defaults.maxConcurrent",
            "2",
            "--config",
        ])
        .arg(gw.config_path()))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("set agents.defaults.maxConcurrent"),
        "{stdout}"
    );
    let after = std::fs::read_to_string(gw.config_path()).unwrap();
    // A new key: inserted after its last sibling, quoted and indented like it, the comma
    // moved; nothing else touched.
    assert_eq!(
        after,
        before.replace(
            "\"stepTimeoutSeconds\": 30\n",
            "\"stepTimeoutSeconds\": 30,\n      \"maxConcurrent\": 2\n"
        )
    );
    let mut expected: Value = json5::from_str(&before).unwrap();
    expected["agents"]["defaults"]["maxConcurrent"] = json!(2);
    assert_eq!(json5::from_str::<Value>(&after).unwrap(), expected);

    let deadline = tokio::time::Instant::now() + WAIT;
    while lane_capacity(&gw, "main").await != Some(2) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the daemon never applied the edit"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let (code, _, stderr) = run(gw
        .command()
        .args([
            "config",
            "set",
            "agents.defaults.subagents.maxConcurrent",
            "0",
            "--config",
        ])
        .arg(gw.config_path()))
    .await;
    assert_eq!(code, 64, "{stderr}");
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(
        stderr.contains("agents.defaults.subagents.maxConcurrent (line ")
            && stderr.contains("must be between 1 and 1024, got 0"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(gw.config_path()).unwrap(),
        after,
        "file unchanged"
    );

    // A key under gateway.* is written, and the operator told it needs a restart.
    let (code, _, stderr) = run(gw
        .command()
        .args(["config", "set", "gateway.shutdownGrace", "3s", "--config"])
        .arg(gw.config_path()))
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("only after a restart") && stderr.contains("gateway.shutdownGrace"),
        "{stderr}"
    );
    fake.assert_no_violations();
}

/// On the commented example config, `set` changes exactly the value's bytes, `unset`
/// only deletes, and `get` reads values and defaults. (Catches: comments, layout or
/// quoting lost by an edit through the CLI.)
#[tokio::test]
async fn set_round_trips_the_example_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.json5");
    std::fs::write(&file, EXAMPLE).unwrap();
    let edit = |args: &[&str]| {
        let mut cmd = cli(dir.path());
        cmd.args(["config"]).args(args).arg("--config").arg(&file);
        cmd
    };
    let (code, _, stderr) = run(&mut edit(&[
        "set",
        "agents.defaults.subagents.maxConcurrent",
        "2",
    ]))
    .await;
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&file).unwrap();
    let at = EXAMPLE.find("maxConcurrent: 8,").unwrap() + "maxConcurrent: ".len();
    assert_eq!(text, format!("{}2{}", &EXAMPLE[..at], &EXAMPLE[at + 1..]));

    let (code, stdout, _) = run(&mut edit(&[
        "get",
        "agents.defaults.subagents.maxConcurrent",
    ]))
    .await;
    assert_eq!((code, stdout.as_str()), (0, "2\n"));
    let (code, stdout, stderr) = run(&mut edit(&["get", "gateway.reload.debounce"])).await;
    assert_eq!((code, stdout.as_str()), (0, "250ms\n"), "{stderr}");
    let (code, stdout, stderr) = run(&mut edit(&["get", "messages.queue"])).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap(),
        json!({"mode": "collect"})
    );
    let (code, _, stderr) = run(&mut edit(&["get", "no.such.key"])).await;
    assert_eq!(code, 1, "{stderr}");

    // A string that reads as a number stays a string with --string; an id as a number.
    let (code, _, stderr) = run(&mut edit(&[
        "set",
        "channels.telegram.allowFrom[0]",
        "123456789",
    ]))
    .await;
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(&mut edit(&[
        "set",
        "--string",
        "channels.discord.allowFrom[0]",
        "987654321",
    ]))
    .await;
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("allowFrom: [123456789],") && text.contains("allowFrom: [\"987654321\"],")
    );

    let (code, _, stderr) = run(&mut edit(&["unset", "channels.discord.allowFrom[0]"])).await;
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = run(&mut edit(&["unset", "channels.discord.allowFrom[0]"])).await;
    assert_eq!(code, 0);
    assert!(stdout.contains("nothing written"), "{stdout}");
    let (code, _, stderr) = run(&mut edit(&["set", "channels.telegram.allowFrom[0]", "42"])).await;
    assert_eq!(code, 0, "{stderr}");
    let (code, _, _) = run(&mut edit(&["unset", "channels.telegram.allowFrom[0]"])).await;
    assert_eq!(code, 0);
    let (code, _, _) = run(&mut edit(&[
        "set",
        "agents.defaults.subagents.maxConcurrent",
        "8",
    ]))
    .await;
    assert_eq!(code, 0);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        EXAMPLE,
        "back to the original bytes"
    );

    let (code, _, stderr) = run(&mut edit(&["set", "agents.list[3].id", "x"])).await;
    assert_eq!(code, 64);
    assert!(
        stderr.contains("`agents.list` has 1 element; the next one is [1]"),
        "{stderr}"
    );
}

/// `config print` shows the effective config with every secret redacted; `config
/// schema` is a JSON Schema of the file. (Catches: a token or API key printed.)
#[tokio::test]
async fn print_redacts_secrets_and_schema_describes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.json5");
    std::fs::write(
        &file,
        r#"{ gateway: { auth: { token: "tok-secret-1" } }, channels: { telegram: { botToken: "${TG}" } },
            models: { providers: { p: { api: "openai-chat", apiKey: "key-secret-2" } } } }"#,
    )
    .unwrap();
    let (code, stdout, stderr) = run(cli(dir.path())
        .args(["config", "print", "--config"])
        .arg(&file)
        .env("TG", "tg-secret-3"))
    .await;
    assert_eq!(code, 0, "{stderr}");
    for secret in ["tok-secret-1", "key-secret-2", "tg-secret-3"] {
        assert!(!stdout.contains(secret), "{secret} printed:\n{stdout}");
    }
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["gateway"]["auth"]["token"], "<redacted>");
    assert_eq!(printed["channels"]["telegram"]["botToken"], "<redacted>");
    assert_eq!(printed["gateway"]["port"], 18789, "defaults filled in");

    let (code, stdout, _) = run(cli(dir.path()).args(["config", "schema"])).await;
    assert_eq!(code, 0);
    let schema: Value = serde_json::from_str(&stdout).unwrap();
    assert!(schema["$schema"]
        .as_str()
        .unwrap()
        .contains("json-schema.org"));
    assert!(schema["properties"]["channels"].is_object());
}

/// Numeric ids are accepted in every allowlist and guild channel list, and a number
/// written by `config set` validates. (Catches: `allowFrom: [123456789]`, OpenClaw's
/// form, refused somewhere.)
#[tokio::test]
async fn numeric_ids_validate_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.json5");
    std::fs::write(
        &file,
        r#"{ channels: {
            telegram: { allowFrom: [123456789, "@ann"], groupAllowFrom: [42], groups: { "-1001234567890": { allowFrom: [7] } } },
            discord: { allowFrom: [123456789012345678], groupAllowFrom: [1], guilds: { "500": { channels: [501, "502"], allowFrom: [42] } } },
        } }"#,
    )
    .unwrap();
    let (code, stdout, stderr) = run(cli(dir.path()).args(["config", "validate"]).arg(&file)).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
}
