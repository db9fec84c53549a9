//! The token the daemon makes when none is configured (README, Security): made once in
//! `<state_dir>/gateway.token` (0600), shown once in the web chat's link, reused after a
//! restart, read by the CLI; a token file others could read, or a symlink, stops the start
//! with a clear error; `gateway.auth.mode: "none"` only on loopback, flagged by `doctor`.

use std::os::unix::fs::PermissionsExt as _;

use reqwest::Method;
use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{EarlyExit, GatewayBuilder};

use crate::cli_config::run;
use crate::common::{config_for, start, BIN};
use crate::security_http::status;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Catches: a new token at every start (the operator's page and scripts would break), the
/// link with the token printed at every start, the change not said in the log, or the
/// CLI unable to find the token.
#[tokio::test]
async fn the_token_is_made_once_shown_once_and_reused() {
    let fake = FakeModel::start().await.unwrap();
    let mut gw = start(&fake, json!({})).await;
    let token = gw.token().expect("made a token");
    let path = gw.state_dir().join("gateway.token");
    assert_eq!(mode(&path), 0o600);
    let first = gw.web_chat_line().unwrap();
    assert_eq!(first, format!("web chat: {}/?token={token}", gw.base_url()));
    // The log is read on its own task: wait for the line rather than take a snapshot.
    gw.wait_for_log("now need the token made in this file", crate::common::WAIT)
        .await
        .unwrap();
    let logs = gw.stderr_lines().join("\n");
    assert!(!logs.contains(&token), "the token is never logged: {logs}");

    // The CLI finds it in the state dir, and prints the page's link for its operator.
    let (code, stdout, stderr) = run(gw.command().args(["status", "--url", &gw.base_url()])).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("web chat: {}/?token={token}", gw.base_url())),
        "{stdout}"
    );

    gw.terminate().await.unwrap();
    gw.restart().await.unwrap();
    assert_eq!(gw.token().as_deref(), Some(token.as_str()), "reused");
    let again = gw.web_chat_line().unwrap();
    assert!(!again.contains(&token), "shown once: {again}");
    assert!(again.contains("gateway.token"), "{again}");
    let lines = gw.stderr_lines();
    let restarted = lines
        .iter()
        .rposition(|l| l.starts_with("--- harness: restarting"))
        .unwrap();
    let restart_logs = lines[restarted..].join("\n");
    assert!(
        !restart_logs.contains("now need the token"),
        "said once: {restart_logs}"
    );
    assert_eq!(
        status(&gw, Method::GET, "/api/sessions", &[]).await,
        401,
        "still needed after the restart"
    );
    let bearer = format!("Bearer {token}");
    assert_eq!(
        status(
            &gw,
            Method::GET,
            "/api/sessions",
            &[("authorization", &bearer)]
        )
        .await,
        200
    );
}

/// Catches: a token file others can read (or swap) being trusted: the start stops with an
/// error naming the file and what to do, and nothing is served.
#[tokio::test]
async fn a_token_file_others_can_read_or_a_symlink_stops_the_start() {
    let fake = FakeModel::start().await.unwrap();
    let mut gw = start(&fake, json!({})).await;
    let path = gw.state_dir().join("gateway.token");
    gw.terminate().await.unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = gw.restart().await.unwrap_err();
    let early = err.downcast_ref::<EarlyExit>().expect("exits before ready");
    let said = early.stderr.join("\n");
    assert!(
        said.contains("gateway.token") && said.contains("644"),
        "{said}"
    );
    assert!(said.contains("chmod 600"), "{said}");

    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("t");
    std::fs::write(&elsewhere, "planted-token\n").unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    let err = gw.restart().await.unwrap_err();
    let early = err.downcast_ref::<EarlyExit>().expect("exits before ready");
    let said = early.stderr.join("\n");
    assert!(said.contains("not a regular file"), "{said}");
}

/// Catches: `mode: "none"` accepted on an exposed address, or not flagged by `doctor`.
#[tokio::test]
async fn no_token_mode_is_for_loopback_only_and_doctor_flags_it() {
    let fake = FakeModel::start().await.unwrap();
    let public = config_for(
        &fake,
        json!({"gateway": {"bind": "0.0.0.0", "auth": {"mode": "none"}}}),
    );
    let err = GatewayBuilder::new(BIN)
        .config(public)
        .start()
        .await
        .map(drop)
        .unwrap_err();
    let early = err
        .downcast_ref::<EarlyExit>()
        .expect("refused before ready");
    assert_eq!(early.status.and_then(|s| s.code()), Some(64));
    assert!(
        early.stderr.join("\n").contains("gateway.auth.mode"),
        "{early}"
    );

    let gw = start(&fake, json!({"gateway": {"auth": {"mode": "none"}}})).await;
    assert!(gw.token().is_none());
    assert!(!gw.state_dir().join("gateway.token").exists());
    assert_eq!(status(&gw, Method::GET, "/api/sessions", &[]).await, 200);
    let (_, stdout, _) = run(gw
        .command()
        .args(["doctor", "--config"])
        .arg(gw.config_path()))
    .await;
    let line = stdout
        .lines()
        .find(|l| l.starts_with("http api"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("WARN") || line.contains("warn"), "{line}");
    assert!(line.contains("mode \"none\""), "{line}");
}
