//! `switchboard pairing list|approve|reject|revoke` against a running daemon's database:
//! a rejected stranger is ignored, a revoked sender is a stranger again.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};
use switchboard_testkit::harness::Gateway;

use crate::cli_config::run;
use crate::common::WAIT;
use crate::telegram::{gateway, wait_all_confirmed};

fn code_in(text: &str) -> String {
    text.split("Your pairing code is ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_else(|| panic!("no pairing code in {text:?}"))
        .to_string()
}

async fn pairing(gw: &Gateway, args: &[&str]) -> (i32, String, String) {
    run(gw
        .command()
        .arg("pairing")
        .args(args)
        .arg("--config")
        .arg(gw.config_path()))
    .await
}

/// Reject keeps a stranger out without a new code; approve lets a sender in; revoke makes
/// them a stranger again (their next message gets a fresh code, not an agent). Checked
/// against everything the bot sent and every model request. (Catches: a rejected sender
/// re-asking at once, a revoked sender still served, `list` hiding rows.)
#[tokio::test]
async fn reject_ignores_approve_admits_revoke_starts_over() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(crate::telegram::TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &tg, json!({"dmPolicy": "pairing"})).await;
    let bob = User::new(77, "bob", "Bob");
    let carol = User::new(88, "carol", "Carol");

    tg.user_message(Chat::private(77), bob.clone(), "let me in");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    let bob_code = code_in(&sent[0].plain_text);
    let (code, stdout, stderr) = pairing(&gw, &["list", "--json"]).await;
    assert_eq!(code, 0, "{stderr}");
    let rows: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(rows["pairings"][0]["senderId"], "77");
    assert_eq!(rows["pairings"][0]["status"], "pending");
    let (code, stdout, _) = pairing(&gw, &["list"]).await;
    assert_eq!(code, 0);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("telegram") && l.contains(" pending ") && l.contains(&bob_code)),
        "{stdout}"
    );

    let (code, stdout, stderr) = pairing(&gw, &["reject", "telegram", &bob_code]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("rejected telegram 77"), "{stdout}");
    let (code, _, stderr) = pairing(&gw, &["reject", "telegram", &bob_code]).await;
    assert_eq!(code, 1, "only a pending request can be rejected: {stderr}");
    let mark = gw.log_mark();
    tg.user_message(Chat::private(77), bob, "please?");
    gw.wait_for_log_since(
        mark,
        "an operator rejected this sender's pairing request",
        WAIT,
    )
    .await
    .unwrap();

    tg.user_message(Chat::private(88), carol.clone(), "hi");
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    let carol_code = code_in(&sent[1].plain_text);
    let (code, _, stderr) =
        pairing(&gw, &["approve", "telegram", &carol_code.to_lowercase()]).await;
    assert_eq!(code, 0, "{stderr}");
    tg.user_message(Chat::private(88), carol.clone(), "now?");
    let sent = tg.wait_for_sent(3, WAIT).await.unwrap();
    assert_eq!(sent[2].text, "echo: now?");

    let (code, _, stderr) = pairing(&gw, &["revoke", "telegram", "99"]).await;
    assert_eq!(code, 1);
    assert!(
        stderr.contains("no approved sender 99 on telegram"),
        "{stderr}"
    );
    let (code, stdout, stderr) = pairing(&gw, &["revoke", "telegram", "88"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("revoked telegram 88"), "{stdout}");
    tg.user_message(Chat::private(88), carol, "still me");
    let sent = tg.wait_for_sent(4, WAIT).await.unwrap();
    let new_code = code_in(&sent[3].plain_text);
    assert_ne!(new_code, carol_code);
    wait_all_confirmed(&tg).await;
    crate::common::wait_outbox_sent(&gw, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(tg.sent_messages().len(), 4, "{:?}", tg.sent_messages());
    assert_eq!(
        fake.request_count(),
        1,
        "only the approved message reached an agent"
    );
}
