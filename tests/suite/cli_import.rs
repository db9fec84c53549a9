//! `switchboard import openclaw` end to end: the real binary reading an OpenClaw config
//! from its default place, printing the report, refusing to replace a file without
//! `--force`, and writing a config the daemon then runs with.

use std::path::Path;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};
use switchboard_testkit::harness::{home_of, GatewayBuilder};

use crate::cli_config::run;
use crate::common::{cli, BIN, WAIT};

const ONBOARDING: &str = include_str!("../fixtures/openclaw/onboarding/openclaw.json");

/// `switchboard import openclaw ARGS` for the state dir `state`.
async fn import(state: &Path, args: &[&str]) -> (i32, String, String) {
    run(cli(state).args(["import", "openclaw"]).args(args)).await
}

/// From `~/.openclaw/openclaw.json` by default: a row per key with what became of it, a
/// config that validates, an existing file refused (exit 73, untouched) until `--force`,
/// which keeps the old file as `.bak`; `--dry-run` writes nothing. (Catches: the report
/// missing a setting, an existing config silently replaced, a dry run that writes.)
#[tokio::test]
async fn imports_the_onboarding_config_and_never_replaces_a_file_unasked() {
    let state = tempfile::tempdir().unwrap();
    let home = home_of(state.path());
    std::fs::create_dir_all(home.join(".openclaw")).unwrap();
    std::fs::write(home.join(".openclaw/openclaw.json"), ONBOARDING).unwrap();
    let out = state.path().join("imported.json5");
    let out_arg = out.to_str().unwrap();

    let (code, stdout, stderr) = import(state.path(), &["--dry-run", "--output", out_arg]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(!out.exists(), "a dry run writes nothing");
    assert!(
        stderr.contains("OPENCLAW KEY"),
        "the report goes to stderr: {stderr}"
    );
    let printed: Value = json5::from_str(&stdout).unwrap();
    assert_eq!(printed["channels"]["telegram"]["dmPolicy"], "pairing");

    let (code, stdout, stderr) = import(state.path(), &["--output", out_arg]).await;
    assert_eq!(code, 0, "{stderr}");
    let row = |key: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))
            .unwrap_or_else(|| panic!("no row for {key}: {stdout}"))
            .to_string()
    };
    assert!(
        row("channels.telegram.botToken").contains(" carried "),
        "{stdout}"
    );
    assert!(
        row("agents.defaults.workspace").contains(" adapted "),
        "{stdout}"
    );
    assert!(row("wizard").contains(" not carried "), "{stdout}");
    assert!(
        row("channels.telegram.streaming").contains(" not carried "),
        "{stdout}"
    );
    assert!(stdout.contains(" not carried\n"), "the counts: {stdout}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.starts_with("// Switchboard config imported from "),
        "{written}"
    );
    let config: Value = json5::from_str(&written).unwrap();
    assert_eq!(
        config["agents"]["defaults"]["workspace"],
        json!(format!("{}/.openclaw/workspace", home.display()))
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "it holds tokens");
    }
    let (code, _, stderr) =
        run(cli(state.path()).args(["config", "validate", "--config", out_arg])).await;
    assert_eq!(code, 0, "{stderr}");

    std::fs::write(&out, "{ /* mine */ }").unwrap();
    let (code, _, stderr) = import(state.path(), &["--output", out_arg]).await;
    assert_eq!(code, 73, "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{ /* mine */ }");

    let (code, stdout, stderr) = import(state.path(), &["--output", out_arg, "--force"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), written);
    let backup = state.path().join("imported.json5.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "{ /* mine */ }");
    assert!(stdout.contains("imported.json5.bak"), "{stdout}");

    let (code, _, stderr) = import(state.path(), &["/nonexistent/openclaw.json", "--json"]).await;
    assert_eq!(code, 66, "an unreadable input is EX_NOINPUT: {stderr}");
    assert!(stderr.contains("/nonexistent/openclaw.json"), "{stderr}");
}

/// An OpenClaw setup (a custom provider, Telegram with prefixed and numeric ids in
/// allowFrom) imported, pointed at the fakes with `config set`, and run: the allowed
/// sender gets the model's answer, a stranger is refused. (Catches: an imported config
/// the daemon cannot start with, `tg:` ids or numeric ids not admitted after import.)
#[tokio::test]
async fn an_imported_config_runs_and_admits_the_same_senders() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(crate::telegram::TOKEN).await.unwrap();
    let state = tempfile::tempdir().unwrap();
    let openclaw = state.path().join("openclaw.json");
    let source = json!({
        "gateway": {"mode": "local", "port": 0, "bind": "loopback"},
        "models": {"providers": {"fake": {
            "baseUrl": fake.base_url(), "apiKey": "test-key", "api": "openai-completions",
            "models": [{"id": "scripted", "contextWindow": 32000}]
        }}},
        "agents": {"defaults": {"model": {"primary": "fake/scripted"}}},
        "channels": {"telegram": {
            "botToken": crate::telegram::TOKEN, "dmPolicy": "allowlist",
            "allowFrom": ["tg:42", 43]
        }}
    });
    std::fs::write(&openclaw, serde_json::to_string_pretty(&source).unwrap()).unwrap();
    let out = state.path().join("config.json5");
    let out_arg = out.to_str().unwrap();
    let (code, _, stderr) = import(
        state.path(),
        &[openclaw.to_str().unwrap(), "--output", out_arg],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    for (key, value) in [
        ("channels.telegram.apiUrl", tg.api_url()),
        ("channels.telegram.pollTimeoutSeconds", "1".to_string()),
    ] {
        let (code, _, stderr) =
            run(cli(state.path()).args(["config", "set", key, &value, "--config", out_arg])).await;
        assert_eq!(code, 0, "{stderr}");
    }
    let text = std::fs::read_to_string(&out).unwrap();
    let _gw = GatewayBuilder::new(BIN).config(text).start().await.unwrap();

    tg.user_message(Chat::private(7), User::new(7, "eve", "Eve"), "let me in");
    tg.user_message(Chat::private(42), User::new(42, "ann", "Ann"), "hello");
    tg.user_message(Chat::private(43), User::new(43, "bo", "Bo"), "hi");
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    let mut replies: Vec<(i64, String)> =
        sent.iter().map(|s| (s.chat_id, s.text.clone())).collect();
    replies.sort();
    assert_eq!(
        replies,
        vec![
            (42, "echo: hello".to_string()),
            (43, "echo: hi".to_string())
        ]
    );
    crate::telegram::wait_all_confirmed(&tg).await;
    assert!(
        tg.sent_messages().iter().all(|s| s.chat_id != 7),
        "the stranger got nothing"
    );
}
