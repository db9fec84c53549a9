//! Exec approvals through Discord message components: the request carries allow/deny
//! buttons, a press arrives as a component interaction (type 3) over the gateway and is
//! answered through the interaction callback — the message updated to the outcome (type 7,
//! its buttons gone) — and a stranger's press gets an ephemeral refusal and changes nothing.

use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_discord::{DUser, FakeDiscord, SentMessage, BOT_ID};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::Gateway;

use crate::common::{start, WAIT};
use crate::tools_support::{script, tool_result, workspace};

const TOKEN: &str = "discord-test-token";
const GUILD: u64 = 700;
const GENERAL: u64 = 701;

fn ann() -> DUser {
    DUser::new(42, "ann")
}

fn stranger() -> DUser {
    DUser::new(77, "eve")
}

/// A guild channel where only Ann may write; only `true` runs unasked.
async fn gateway(fake: &FakeModel, dc: &FakeDiscord) -> Gateway {
    dc.add_guild(GUILD, "team", &[GENERAL]);
    let discord = json!({"enabled": true, "token": TOKEN, "apiUrl": dc.api_url(),
        "allowFrom": ["42"], "guilds": {GUILD.to_string(): {}}});
    let gw = start(
        fake,
        json!({
            "channels": {"discord": discord},
            "tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}},
        }),
    )
    .await;
    dc.wait_ready(1, WAIT).await.unwrap();
    gw
}

async fn wait_for(
    dc: &FakeDiscord,
    what: &str,
    found: impl Fn(&SentMessage) -> bool,
) -> SentMessage {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        if let Some(m) = dc.sent_messages().into_iter().find(&found) {
            return m;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited for {what}; sent: {:?}",
            dc.sent_messages()
                .iter()
                .map(|m| m.content.clone())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The request shows three buttons; a stranger's press is refused ephemerally; Ann's
/// "deny" updates the message to the outcome without buttons and the model is told.
/// Catches: no components on Discord, component interactions ignored or unanswered, a
/// stranger deciding, the message keeping live buttons after the decision.
#[tokio::test]
async fn a_component_press_decides_and_a_stranger_s_press_is_refused() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let gw = gateway(&fake, &dc).await;
    script(
        &fake,
        "dc1",
        "exec",
        &json!({"command": "touch denied.txt"}).to_string(),
    );
    dc.guild_message(GUILD, GENERAL, ann(), &format!("<@{BOT_ID}> dc1"));
    let req = wait_for(&dc, "the approval request", |m| {
        m.content.starts_with("🔐 Approval needed [")
    })
    .await;
    let id = req.content["🔐 Approval needed [".len()..]
        .split(']')
        .next()
        .unwrap()
        .to_string();
    let ids: Vec<String> = req.buttons().into_iter().map(|(_, id)| id).collect();
    assert_eq!(
        ids,
        vec![
            format!("approve:{id}:allow-once"),
            format!("approve:{id}:allow-always"),
            format!("approve:{id}:deny"),
        ]
    );

    dc.press_button(Some(GUILD), stranger(), req.message_id, &ids[0])
        .unwrap();
    let answers = dc.wait_for_interaction_responses(1, WAIT).await.unwrap();
    assert_eq!(answers[0].kind, 4, "{answers:?}");
    assert!(answers[0].ephemeral, "{answers:?}");
    assert_eq!(
        answers[0].content.as_deref(),
        Some("You are not allowed to answer this request.")
    );
    let (_, components) = dc.bot_message(req.message_id).unwrap();
    assert!(components.is_some(), "the buttons are still there");

    dc.press_button(Some(GUILD), ann(), req.message_id, &ids[2])
        .unwrap();
    let answers = dc.wait_for_interaction_responses(2, WAIT).await.unwrap();
    assert_eq!(answers[1].kind, 7, "the message is updated: {answers:?}");
    let (content, components) = dc.bot_message(req.message_id).unwrap();
    assert!(
        content.starts_with(&format!("🔐 Approval [{id}]: 🚫 denied by ann")),
        "{content}"
    );
    assert_eq!(components, None, "no buttons left");
    wait_for(&dc, "the run's answer", |m| m.content == "done dc1").await;
    assert!(!workspace(&gw).join("denied.txt").exists());
    let r = tool_result(&fake, "dc1");
    assert!(r.contains("denied by the user"), "{r}");
    dc.assert_no_violations();
    fake.assert_no_violations();
}

/// A restart while the request waits: its button works afterwards (through the new
/// gateway session) and the request is not posted again.
/// Catches: a press after a restart finding nothing, or a second request message.
#[tokio::test]
async fn a_press_after_a_restart_works() {
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    let mut gw = gateway(&fake, &dc).await;
    script(
        &fake,
        "dc2",
        "exec",
        &json!({"command": "touch restarted.txt"}).to_string(),
    );
    dc.guild_message(GUILD, GENERAL, ann(), &format!("<@{BOT_ID}> dc2"));
    let req = wait_for(&dc, "the approval request", |m| {
        m.content.starts_with("🔐 Approval needed [")
    })
    .await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    gw.restart().await.unwrap();
    dc.wait_ready(2, WAIT).await.unwrap();
    let allow = req.buttons()[0].1.clone();
    dc.press_button(Some(GUILD), ann(), req.message_id, &allow)
        .unwrap();
    wait_for(&dc, "the run's answer", |m| m.content == "done dc2").await;
    assert!(workspace(&gw).join("restarted.txt").exists());
    let requests = dc
        .sent_messages()
        .iter()
        .filter(|m| m.content.starts_with("🔐 Approval needed"))
        .count();
    assert_eq!(requests, 1, "the request was not posted again");
    let answers = dc.interaction_responses();
    assert_eq!(answers.last().map(|a| a.kind), Some(7), "{answers:?}");
    dc.assert_no_violations();
    fake.assert_no_violations();
}
