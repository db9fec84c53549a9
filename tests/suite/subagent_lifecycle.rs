//! Sub-agent lifecycle end to end: delivery across a SIGKILL while the chat is closed,
//! `cleanup: "delete"` archiving, `ANNOUNCE_SKIP`, `/subagents send`, no nesting,
//! stopping by id prefix and stopping a follow-up run, and an announce step cut by
//! shutdowns.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{chat, start, WAIT};
use crate::record::{outbox, rest_of_socket};
use crate::subagents::{announces, spawn_call};

async fn child_row(gw: &Gateway, n: usize) -> Value {
    crate::common::get_json(gw, "/api/subagents").await["subagents"][n].clone()
}

/// Poll the registry until `done` holds for the newest child (bounded).
async fn wait_row(gw: &Gateway, done: impl Fn(&Value) -> bool) -> Value {
    let mut row = child_row(gw, 0).await;
    for _ in 0..200 {
        if done(&row) {
            return row;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        row = child_row(gw, 0).await;
    }
    panic!("sub-agent row never reached the expected state: {row}");
}

/// An announce for a chat nobody has open stays in the outbox, survives a SIGKILL, and is
/// delivered once when the chat is opened after the restart. Checked against the outbox
/// row and the socket's full log after a graceful stop. (Catches: a refused delivery
/// marked failed, or a pending row lost or duplicated by the crash and restart.)
#[tokio::test]
async fn an_announce_for_a_closed_chat_survives_a_sigkill_and_arrives_once() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "spawn one",
        Step::ToolCalls(vec![spawn_call("patient child", json!({}))]),
    );
    fake.push_for("spawn one", Step::Text("spawned".into()));
    // The child ends only once the chat is closed.
    let gate = Gate::new();
    fake.push_for("patient child", Step::gated(&gate, Step::text("done")));
    let mut gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("spawn one").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "spawned");
    ws.close().await.unwrap();
    gate.open();
    // Nobody has the chat open: the channel refuses the announce and the outbox keeps it.
    gw.wait_for_log("delivery failed; will retry", WAIT)
        .await
        .unwrap();
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();
    let mut ws = chat(&gw, "main").await;
    let got = announces(&mut ws, 1, WAIT).await;
    assert!(
        got[0].starts_with("Status: success\nResult: echo: Your task has ended."),
        "{}",
        got[0]
    );
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(rest_of_socket(&mut ws).await, Vec::<String>::new());
    let rows: Vec<(String, String)> = outbox(&gw)
        .await
        .into_iter()
        .map(|r| (r.key.split(':').next().unwrap().to_string(), r.state))
        .collect();
    assert_eq!(
        rows,
        [
            ("run".to_string(), "sent".to_string()),
            ("announce".to_string(), "sent".to_string())
        ]
    );
}

#[tokio::test]
async fn cleanup_delete_archives_right_after_the_announce_and_keeps_the_transcript() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "tidy",
        Step::ToolCalls(vec![spawn_call("neat child", json!({"cleanup": "delete"}))]),
    );
    fake.push_for("tidy", Step::Text("spawned".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("tidy up").await.unwrap();
    // The parent's reply and the announce may arrive in either order: take both.
    crate::common::answer_and_announces(&mut ws, 1).await;
    let row = wait_row(&gw, |r| r["archivedAt"].is_i64()).await;
    let key = row["childSessionKey"].as_str().unwrap();
    let sessions: Value = gw
        .http()
        .get(format!("{}/api/sessions?archived=true", gw.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let child = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionKey"] == key)
        .unwrap()
        .clone();
    assert_eq!(child["status"], "archived");
    let transcript = crate::common::get_text(&gw, &format!("/api/sessions/{key}/transcript")).await;
    assert!(transcript.contains("neat child"), "{transcript}");
    // A message to an archived child is refused with a clear line.
    ws.send_text("/subagents send 1 more please").await.unwrap();
    let answer = ws.next_message(WAIT).await.unwrap();
    assert!(
        answer.ends_with("is archived; its session no longer takes messages."),
        "{answer}"
    );
}

#[tokio::test]
async fn announce_skip_posts_nothing() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "quiet",
        Step::ToolCalls(vec![spawn_call("hush-hush child", json!({}))]),
    );
    fake.push_for("quiet", Step::Text("spawned".into()));
    fake.push_for("Your task has ended", Step::Text("ANNOUNCE_SKIP".into()));
    let mut gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("quiet please").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "spawned");
    let row = wait_row(&gw, |r| {
        r["announceState"] != "pending" && r["announceState"] != "none"
    })
    .await;
    assert_eq!(row["announceState"], "skipped");
    // Nothing posted: no announce row, and nothing more on the socket up to a stop.
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(rest_of_socket(&mut ws).await, Vec::<String>::new());
    let keys: Vec<String> = outbox(&gw).await.into_iter().map(|r| r.key).collect();
    assert!(keys.iter().all(|k| k.starts_with("run:")), "{keys:?}");
}

#[tokio::test]
async fn send_talks_to_a_child_and_children_cannot_spawn() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![spawn_call("nested task", json!({"label": "nest"}))]),
    );
    fake.push_for("delegate", Step::Text("spawned".into()));
    fake.push_for(
        "nested task",
        Step::ToolCalls(vec![spawn_call("grandchild", json!({}))]),
    );
    fake.push_for("nested task", Step::Text("could not nest".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("delegate this").await.unwrap();
    let (answer, _) = crate::common::answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "spawned");
    let child_second = fake
        .requests()
        .into_iter()
        .find(|r| {
            let b = r.body.to_string();
            b.contains("nested task")
                && b.contains("\"role\":\"tool\"")
                && !b.contains("delegate this")
        })
        .unwrap();
    let tool = child_second.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(
        tool["content"],
        "error: forbidden: sub-agents cannot use `sessions_spawn`"
    );

    ws.send_text("/subagents send #1 and one more thing")
        .await
        .unwrap();
    let answer = ws.next_message(WAIT).await.unwrap();
    assert!(
        answer.ends_with("replied:\necho: and one more thing"),
        "{answer}"
    );
}

#[tokio::test]
async fn stop_by_id_prefix_and_bad_targets() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "start worker",
        Step::ToolCalls(vec![spawn_call("endless worker", json!({}))]),
    );
    fake.push_for("start worker", Step::Text("spawned".into()));
    fake.push_for("endless worker", Step::Hang);
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("start worker").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "spawned");
    fake.wait_for_requests(3, WAIT).await.unwrap();
    ws.send_text("/subagents stop").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "Usage: /subagents stop <#|id|all>"
    );
    ws.send_text("/subagents stop zzzz").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "No sub-agent matches `zzzz`."
    );
    let id = child_row(&gw, 0).await["runId"]
        .as_str()
        .unwrap()
        .to_string();
    ws.send_text(&format!("/subagents stop {}", &id[..6]))
        .await
        .unwrap();
    let (answer, got) = crate::common::answer_and_announces(&mut ws, 1).await;
    assert_eq!(
        answer,
        format!("Stopping sub-agent {} (endless worker).", &id[..8])
    );
    assert!(
        got[0].starts_with(
            "Status: unknown\nResult: (not available)\nNotes: stopped by /subagents stop\n"
        ),
        "{}",
        got[0]
    );
    fake.wait_for_dropped(1, WAIT).await.unwrap();
}

#[tokio::test]
async fn model_precedence_and_stop_through_the_api() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "two kinds",
        Step::ToolCalls(vec![
            spawn_call("default-model child", json!({})),
            spawn_call("explicit-model child", json!({"model": "fake/explicit"})),
        ]),
    );
    fake.push_for("two kinds", Step::Text("spawned".into()));
    fake.push_for("default-model child", Step::Hang);
    let gw = start(
        &fake,
        json!({"agents": {"defaults": {"subagents": {"model": "fake/sub-default"}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("two kinds please").await.unwrap();
    let (answer, got) = crate::common::answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "spawned");
    assert!(got[0].starts_with("Status: success"), "{}", got[0]);
    // Parent ×2, explicit child + its announce step, and the hanging child's first call.
    fake.wait_for_requests(5, WAIT).await.unwrap();
    let model_of = |needle: &str| {
        fake.requests()
            .into_iter()
            .find(|r| {
                r.body["messages"].as_array().unwrap().iter().any(|m| {
                    m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.contains(needle))
                }) && !r.body.to_string().contains("two kinds please")
            })
            .map(|r| r.body["model"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(model_of("explicit-model child"), "explicit");
    assert_eq!(model_of("default-model child"), "sub-default");
    // The parent itself runs on the agent default.
    assert_eq!(fake.requests()[0].body["model"], "scripted");

    let api = crate::common::get_json(&gw, "/api/subagents").await;
    let hanging = api["subagents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["task"] == "default-model child")
        .unwrap()
        .clone();
    let id = hanging["runId"].as_str().unwrap();
    let r: Value = gw
        .http()
        .post(format!("{}/api/subagents/{id}/stop", gw.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r, json!({"runId": id, "stopped": true}));
    let got = announces(&mut ws, 1, WAIT).await;
    assert!(
        got[0].starts_with(
            "Status: unknown\nResult: (not available)\nNotes: stopped through the API\n"
        ),
        "{}",
        got[0]
    );
    let r = gw
        .http()
        .post(format!("{}/api/subagents/nope/stop", gw.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

/// A shutdown during the announce step is no failed attempt, and the child is asked for
/// its announce once however often the step is cut. (Catches: a shutdown counted as a
/// failed attempt, five of which marked the announce failed and never sent, and the
/// announce prompt appended to the child's transcript again at each retry.)
#[tokio::test]
async fn a_shutdown_during_the_announce_step_costs_no_attempt_and_asks_once() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "spawn a reporter",
        Step::ToolCalls(vec![spawn_call("reporting child", json!({}))]),
    );
    fake.push_for("spawn a reporter", Step::Text("spawned".into()));
    fake.push_for("Your task has ended", Step::Hang);
    fake.push_for("Your task has ended", Step::Hang);
    fake.push_for("Your task has ended", Step::Text("final summary".into()));
    let mut gw = start(&fake, json!({"gateway": {"shutdownGrace": "200ms"}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("spawn a reporter").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "spawned");
    // The parent's two calls, the child's, then the announce step, cut twice.
    for requests in [4, 5] {
        fake.wait_for_requests(requests, WAIT).await.unwrap();
        assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
        gw.restart().await.unwrap();
    }
    let mut ws = chat(&gw, "main").await;
    let got = announces(&mut ws, 1, WAIT).await;
    assert!(
        got[0].starts_with("Status: success\nResult: final summary\n"),
        "{}",
        got[0]
    );
    let row = child_row(&gw, 0).await;
    assert_eq!(
        (&row["announceState"], &row["announceAttempts"]),
        (&json!("queued"), &json!(0)),
        "{row}"
    );
    let key = row["childSessionKey"].as_str().unwrap();
    let transcript = crate::common::get_text(&gw, &format!("/api/sessions/{key}/transcript")).await;
    let asked = transcript
        .lines()
        .filter(|l| l.contains("\"role\":\"user\"") && l.contains("Your task has ended"))
        .count();
    assert_eq!(asked, 1, "{transcript}");
}

/// `/subagents stop` stops a follow-up run that `/subagents send` started in a child whose
/// first run had ended. (Catches: stopping returned early for a child with an outcome:
/// "not running", and the follow-up ran on.)
#[tokio::test]
async fn subagents_stop_stops_a_follow_up_run_of_an_ended_child() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "spawn a helper",
        Step::ToolCalls(vec![spawn_call("quick child", json!({}))]),
    );
    fake.push_for("spawn a helper", Step::Text("spawned".into()));
    fake.push_for("keep digging", Step::Hang);
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("spawn a helper").await.unwrap();
    crate::common::answer_and_announces(&mut ws, 1).await;
    let id = child_row(&gw, 0).await["runId"]
        .as_str()
        .unwrap()
        .to_string();
    let short = &id[..8];
    ws.send_text("/subagents send 1 keep digging")
        .await
        .unwrap();
    // Parent ×2, the child, its announce step, and the follow-up, which hangs.
    fake.wait_for_requests(5, WAIT).await.unwrap();
    ws.send_text("/subagents stop 1").await.unwrap();
    let mut answers = vec![
        ws.next_message(WAIT).await.unwrap(),
        ws.next_message(WAIT).await.unwrap(),
    ];
    answers.sort();
    assert_eq!(
        answers,
        [
            format!("Stopping sub-agent {short} (quick child)."),
            format!("Sub-agent {short} ended without a reply (cancelled)."),
        ]
    );
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    // The child's own record is as it was: it succeeded and was announced.
    let row = child_row(&gw, 0).await;
    assert_eq!(
        (&row["outcome"], &row["announceState"]),
        (&json!("success"), &json!("queued"))
    );
}
