//! `switchboard doctor` end to end: a healthy setup passes every check against the fake
//! platforms and model; a broken one is reported check by check (and `--fix` tightens
//! permissions); exit 0 only when nothing is wrong.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};
use switchboard_testkit::fake_discord::FakeDiscord;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::FakeTelegram;
use switchboard_testkit::harness::GatewayBuilder;

use crate::cli_config::run;
use crate::common::{cli, config_for, merge, BIN};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The doctor's JSON report: (check, status, detail) rows.
fn rows(stdout: &str) -> Vec<(String, String, String)> {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["check"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn row<'a>(rows: &'a [(String, String, String)], check: &str) -> &'a (String, String, String) {
    rows.iter()
        .find(|r| r.0 == check)
        .unwrap_or_else(|| panic!("no {check} row: {rows:?}"))
}

/// A daemon that created its own state dir, with both channels' tokens valid and the
/// model reachable: every check passes and doctor exits 0. (Catches: a check that fails a
/// good setup, tokens not tried, the daemon creating its state dir or database readable
/// by others.)
#[tokio::test]
async fn a_healthy_setup_passes_every_check() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start("123:TG").await.unwrap();
    let dc = FakeDiscord::start("dc-token").await.unwrap();
    let mut cfg: Value = serde_json::from_str(&config_for(&fake, json!({}))).unwrap();
    merge(
        &mut cfg,
        &json!({
            "session": {"dmScope": "per-channel-peer"},
            "channels": {
                "telegram": {"enabled": true, "botToken": "123:TG", "apiUrl": tg.api_url(), "allowFrom": [42], "pollTimeoutSeconds": 1},
                "discord": {"enabled": true, "token": "dc-token", "apiUrl": dc.api_url(), "allowFrom": ["42"]},
            }
        }),
    );
    let holder = tempfile::tempdir().unwrap();
    let state = holder.path().join("fresh/state");
    let mut gw = GatewayBuilder::new(BIN)
        .config(cfg.to_string())
        .env("SWITCHBOARD_STATE_DIR", state.to_str().unwrap())
        .start()
        .await
        .unwrap();
    dc.wait_ready(1, crate::common::WAIT).await.unwrap();
    assert_eq!(
        mode(&state),
        0o700,
        "the daemon creates its state dir private"
    );
    assert_eq!(mode(&state.join("data/switchboard.db")), 0o600);
    std::fs::set_permissions(gw.config_path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    // The suite runs as root, which doctor warns about (`daemon user`): the state dir is
    // given to a user of its own, as a deployed daemon's is.
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&state, Some(65534), None).unwrap();
    }

    let (code, stdout, stderr) = run(gw
        .command()
        .args(["doctor", "--json", "--config"])
        .arg(gw.config_path()))
    .await;
    let rows = rows(&stdout);
    assert_eq!(code, 0, "{rows:#?}\n{stderr}");
    assert!(
        rows.iter().all(|r| r.1 == "ok" || r.1 == "skip"),
        "{rows:#?}"
    );
    assert!(
        row(&rows, "telegram").2.starts_with("token accepted: @"),
        "{rows:?}"
    );
    assert!(
        row(&rows, "discord").2.starts_with("token accepted: "),
        "{rows:?}"
    );
    assert_eq!(
        row(&rows, "provider fake").2,
        "reachable, key accepted (GET /models)"
    );
    assert_eq!(row(&rows, "database").2, "integrity check passed");
    assert_eq!(
        row(&rows, "daemon").1,
        "skip",
        "port 0: the address is not in the config"
    );

    let (code, stdout, _) = run(gw
        .command()
        .args(["doctor", "--config"])
        .arg(gw.config_path()))
    .await;
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("CHECK ") && stdout.ends_with("no problems found\n"),
        "{stdout}"
    );
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
}

/// A refused Telegram token, an open Discord DM policy, a provider without its key, two
/// DM senders sharing a session, and a state dir and database others can read: each is
/// its own row, doctor exits 1, and `--fix` tightens the permissions (only those).
/// (Catches: a problem not reported, exit 0 with warnings, `--fix` changing anything
/// else or fixing nothing.)
#[tokio::test]
async fn problems_are_reported_and_fix_tightens_permissions() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start("123:RIGHT").await.unwrap();
    let dc = FakeDiscord::start("dc-token").await.unwrap();
    let state = tempfile::tempdir().unwrap();
    // The database, created by a CLI command, then opened up as an old install might have.
    let (code, _, stderr) = run(cli(state.path()).args(["pairing", "list"])).await;
    assert_eq!(code, 0, "{stderr}");
    let db = state.path().join("data/switchboard.db");
    std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();

    let config = state.path().join("config.json5");
    std::fs::write(
        &config,
        json!({
            "models": {"providers": {"fake": {"api": "openai-chat", "baseUrl": fake.base_url()}}},
            "agents": {"defaults": {"model": "fake/scripted"}},
            "channels": {
                "telegram": {"enabled": true, "botToken": "123:WRONG", "apiUrl": tg.api_url(), "allowFrom": [42]},
                "discord": {"enabled": true, "token": "dc-token", "apiUrl": dc.api_url(), "dmPolicy": "open", "allowFrom": [7]},
            }
        })
        .to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    let doctor = |fix: bool| {
        let mut cmd = cli(state.path());
        cmd.args(["doctor", "--json", "--config"]).arg(&config);
        if fix {
            cmd.arg("--fix");
        }
        cmd
    };

    let (code, stdout, _) = run(&mut doctor(false)).await;
    let found = rows(&stdout);
    assert_eq!(code, 1, "{found:#?}");
    assert_eq!(row(&found, "telegram").1, "fail");
    assert!(
        row(&found, "telegram").2.contains("refused the bot token"),
        "{found:?}"
    );
    assert!(!stdout.contains("123:WRONG"), "the token is never printed");
    assert_eq!(row(&found, "discord").1, "ok");
    assert_eq!(row(&found, "discord access").1, "warn");
    assert!(
        row(&found, "discord access")
            .2
            .contains("dmPolicy \"open\""),
        "{found:?}"
    );
    assert_eq!(row(&found, "provider fake").1, "fail");
    assert!(
        row(&found, "provider fake").2.contains("needs an API key"),
        "{found:?}"
    );
    assert_eq!(row(&found, "dm sessions").1, "warn");
    assert_eq!(row(&found, "state dir").1, "fail");
    assert_eq!(
        row(&found, "config file").1,
        "fail",
        "a config with a token written out, readable by others"
    );
    assert!(
        found
            .iter()
            .any(|r| r.0 == "database file" && r.1 == "fail" && r.2.contains("0644")),
        "{found:?}"
    );
    assert_eq!(mode(state.path()), 0o755, "nothing changed without --fix");

    let (code, stdout, _) = run(&mut doctor(true)).await;
    let fixed = rows(&stdout);
    assert_eq!(code, 1, "the other problems remain");
    assert_eq!(row(&fixed, "state dir").1, "fixed");
    assert_eq!(row(&fixed, "config file").1, "fixed");
    assert!(
        fixed
            .iter()
            .any(|r| r.0 == "database file" && r.1 == "fixed"),
        "{fixed:?}"
    );
    assert_eq!(
        (mode(state.path()), mode(&db), mode(&config)),
        (0o700, 0o600, 0o600)
    );
    assert_eq!(row(&fixed, "telegram").1, "fail");

    // An invalid config: each error is a row of its own, and nothing else is tried.
    std::fs::write(
        &config,
        "{ agents: { defaults: { maxConcurrent: 0, maxSteps: 0 } } }",
    )
    .unwrap();
    let (code, stdout, _) = run(&mut doctor(false)).await;
    let invalid = rows(&stdout);
    assert_eq!(code, 1);
    let errors: Vec<&str> = invalid
        .iter()
        .filter(|r| r.0 == "config")
        .map(|r| r.2.as_str())
        .collect();
    assert_eq!(errors.len(), 2, "{invalid:?}");
    assert!(
        errors[0].starts_with("agents.defaults.maxConcurrent (line 1"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("agents.defaults.maxSteps (line 1"),
        "{errors:?}"
    );
    assert_eq!(row(&invalid, "channels, models, security").1, "skip");
}

/// On PostgreSQL: before any gateway ran, doctor finds the server and no schema, and
/// creates none; with a gateway active it finds the schema current and names the lease's
/// holder; a migration that failed part-way is a failure. (Catches: doctor skipping
/// PostgreSQL, migrating or creating what it inspects, a lease holder not shown, a broken
/// schema passed as healthy.)
#[tokio::test]
async fn a_postgres_database_is_inspected_and_left_as_it_was() {
    use sqlx::Connection as _;
    let fake = FakeModel::start().await.unwrap();
    let db = switchboard_testkit::pg::TestDb::create().await.unwrap();
    let cfg = config_for(&fake, json!({"storage": {"url": db.url()}}));
    let state = tempfile::tempdir().unwrap();
    let config = state.path().join("config.json5");
    std::fs::write(&config, &cfg).unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let doctor = || {
        let mut cmd = cli(state.path());
        cmd.args(["doctor", "--json", "--config"]).arg(&config);
        cmd
    };

    let (_, stdout, _) = run(&mut doctor()).await;
    let found = rows(&stdout);
    assert_eq!(row(&found, "database").1, "ok", "{found:?}");
    assert!(
        row(&found, "database").2.starts_with("PostgreSQL ")
            && row(&found, "database")
                .2
                .ends_with("no schema yet (created at the first run)"),
        "{found:?}"
    );
    assert_eq!(
        row(&found, "leases").2,
        "none held: no gateway is active on this database"
    );
    let mut conn = sqlx::PgConnection::connect(db.url()).await.unwrap();
    let tables: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(tables, 0, "doctor created nothing");

    let mut gw = GatewayBuilder::new(BIN).config(cfg).start().await.unwrap();
    let (_, stdout, _) = run(&mut doctor()).await;
    let found = rows(&stdout);
    assert_eq!(row(&found, "database").1, "ok", "{found:?}");
    assert!(
        row(&found, "database").2.contains(": schema current ("),
        "{found:?}"
    );
    assert!(
        row(&found, "leases").2.starts_with("gateway held by "),
        "{found:?}"
    );

    sqlx::query("UPDATE _sqlx_migrations SET success = false WHERE version = 1")
        .execute(&mut conn)
        .await
        .unwrap();
    let (code, stdout, _) = run(&mut doctor()).await;
    let found = rows(&stdout);
    assert_eq!(code, 1);
    assert_eq!(row(&found, "database").1, "fail", "{found:?}");
    assert!(
        row(&found, "database")
            .2
            .contains("migration 1 failed part-way"),
        "{found:?}"
    );
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
}
