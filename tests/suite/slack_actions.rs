//! Slack's buttons, lines and files end to end: an exec approval as Block Kit buttons,
//! pressed by an owner (the message updated by `chat.update`, its buttons gone) and by a
//! member who is not one (an ephemeral refusal, nothing changed); a sub-agent's progress
//! line posted once and edited by `chat.update`; a file the agent sends uploaded through
//! `files.getUploadURLExternal` + upload + `files.completeUploadExternal`.

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::fake_slack::{FakeSlack, SUser};

use crate::agents_progress::{progress, script_parent};
use crate::common::WAIT;
use crate::slack::{ann, gateway, gateway_with, mention, post_with, APP_TOKEN, BOT_TOKEN, GENERAL};
use crate::tools_support::{script, tool_result, workspace};

fn bob() -> SUser {
    SUser::new("UBOB00001", "bob")
}

/// Catches: no buttons on Slack, presses ignored or unanswered, a member who is not an
/// owner deciding, the message keeping live buttons after the decision.
#[tokio::test]
async fn an_owner_decides_by_button_and_a_non_owner_is_refused() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let gw = gateway_with(
        &fake,
        &sl,
        json!({"channels": {GENERAL: {"allowFrom": [ann().id, bob().id]}}, "owners": [ann().id]}),
        json!({"tools": {"exec": {"allowlist": ["/usr/bin/true", "/bin/true"]}}}),
    )
    .await;
    script(
        &fake,
        "sl1",
        "exec",
        &json!({"command": "touch denied.txt"}).to_string(),
    );
    let top = sl.channel_message(GENERAL, &ann(), &mention("sl1"));
    let req = post_with(&sl, "Approval needed [").await;
    assert_eq!(
        req.thread_ts.as_deref(),
        Some(top.as_str()),
        "in the mention's thread"
    );
    let id = req.text["🔐 Approval needed [".len()..]
        .split(']')
        .next()
        .unwrap()
        .to_string();
    let ids: Vec<String> = req.buttons().into_iter().map(|(_, a)| a).collect();
    assert_eq!(
        ids,
        vec![
            format!("approve:{id}:allow-once"),
            format!("approve:{id}:allow-always"),
            format!("approve:{id}:deny"),
        ]
    );

    let press = sl.press(&bob(), &req.ts, &ids[0]).unwrap();
    let refused = sl.wait_ephemerals(1, WAIT).await.unwrap();
    assert_eq!(refused[0].user, bob().id);
    assert_eq!(refused[0].text, "Only an owner can answer this.");
    sl.wait_acked(&press, 1, WAIT).await.unwrap();
    let still = sl.posted().into_iter().find(|p| p.ts == req.ts).unwrap();
    assert_eq!(still.buttons().len(), 3, "the buttons are still there");

    sl.press(&ann(), &req.ts, &ids[2]).unwrap();
    let updates = sl.wait_updates(1, WAIT).await.unwrap();
    assert_eq!(updates[0].ts, req.ts);
    assert!(
        updates[0]
            .text
            .starts_with(&format!("🔐 Approval [{id}]: 🚫 denied")),
        "{updates:?}"
    );
    let after = sl.posted().into_iter().find(|p| p.ts == req.ts).unwrap();
    assert!(after.buttons().is_empty(), "no buttons left: {after:?}");
    post_with(&sl, "done sl1").await;
    assert!(!workspace(&gw).join("denied.txt").exists());
    assert!(tool_result(&fake, "sl1").contains("denied by the user"));
    sl.wait_all_acked(WAIT).await.unwrap();
    sl.assert_no_violations();
    fake.assert_no_violations();
}

/// Catches: a progress line posted anew per call instead of edited with `chat.update`,
/// or an edit of another message.
#[tokio::test]
async fn a_progress_line_is_edited_by_chat_update() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    script_parent(&fake, "count the stars", "stars task", "stars");
    let more = Gate::new();
    fake.push_for("stars task", Step::ToolCalls(vec![progress("a")]));
    fake.push_for(
        "stars task",
        Step::gated(&more, Step::ToolCalls(vec![progress("b")])),
    );
    let end = Gate::new();
    fake.push_for("stars task", Step::gated(&end, Step::text("42 stars")));
    let _gw = gateway(&fake, &sl, json!({})).await;

    sl.dm(&ann(), "count the stars");
    let line = sl
        .wait_post(WAIT, |p| p.text.starts_with("⏳"))
        .await
        .unwrap();
    assert_eq!(line.text, "⏳ stars: a");
    more.open();
    let updates = sl
        .wait_update(WAIT, |u| u.text == "⏳ stars: b")
        .await
        .unwrap();
    assert!(updates.iter().all(|u| u.ts == line.ts), "{updates:?}");
    end.open();
    sl.wait_update(WAIT, |u| u.text == "✅ stars: done")
        .await
        .unwrap();
    let lines: Vec<_> = sl
        .posted()
        .into_iter()
        .filter(|p| p.text.starts_with('⏳') || p.text.starts_with('✅'))
        .collect();
    assert_eq!(lines.len(), 1, "one message for the line: {lines:?}");
    assert_eq!(lines[0].ts, line.ts);
    sl.assert_no_violations();
}

/// Catches: a file the agent sends not uploaded, uploaded with the wrong bytes or name,
/// or shared elsewhere than the chat.
#[tokio::test]
async fn a_file_the_agent_sends_is_uploaded() {
    let fake = FakeModel::start().await.unwrap();
    let sl = FakeSlack::start(BOT_TOKEN, APP_TOKEN).await.unwrap();
    let gw = gateway(&fake, &sl, json!({})).await;
    let body = "line one\nline two\n".repeat(100);
    std::fs::create_dir_all(workspace(&gw)).unwrap();
    std::fs::write(workspace(&gw).join("report.txt"), &body).unwrap();
    fake.push_for(
        "send the report",
        Step::tool_call("message", r#"{"path": "report.txt", "text": "the report"}"#),
    );
    fake.push_for("send the report", Step::text("sent"));

    sl.dm(&ann(), "send the report");
    let up = sl.wait_uploads(1, WAIT).await.unwrap();
    assert_eq!(up[0].filename, "report.txt");
    assert_eq!(up[0].bytes, body.as_bytes());
    assert_eq!(up[0].channel, sl.dm_channel(&ann()));
    post_with(&sl, "the report").await;
    post_with(&sl, "sent").await;
    sl.assert_no_violations();
}
