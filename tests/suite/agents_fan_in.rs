//! Fan-in end to end: a child's announce is also recorded in the requester's transcript,
//! so the requester's next model call knows what the child found.

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};

use crate::common::{answer_and_announces, chat, start, WAIT};
use crate::subagents::spawn_call;

/// A parent spawns, the child ends and announces, and the parent's next model request
/// carries the child's result as a user-role message naming the child's label and run id.
/// (Catches: the announce going to the chat only, so the parent agent never learns what
/// its children found.)
#[tokio::test]
async fn the_parents_next_model_call_sees_the_childs_result() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "research please",
        Step::ToolCalls(vec![spawn_call(
            "count the moons of Jupiter",
            json!({"label": "moons"}),
        )]),
    );
    fake.push_for("research please", Step::text("started"));
    fake.push_for("count the moons", Step::text("Jupiter has 95 known moons."));
    fake.push_for("Your task has ended", Step::text("95 moons."));
    fake.push_for("compare now", Step::text("compared"));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("research please").await.unwrap();
    let (answer, got) = answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "started");
    assert!(
        got[0].starts_with("Status: success\nResult: 95 moons."),
        "{}",
        got[0]
    );

    ws.send_text("compare now").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "compared");
    let run_id = crate::common::get_json(&gw, "/api/subagents").await["subagents"][0]["runId"]
        .as_str()
        .unwrap()
        .to_string();
    let req = fake
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("compare now"))
        .unwrap();
    let messages = req.body["messages"].as_array().unwrap();
    let fan_in: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.starts_with("[sub-agent result"))
        .collect();
    assert_eq!(fan_in.len(), 1, "{messages:?}");
    assert!(
        fan_in[0].starts_with(&format!(
            "[sub-agent result: from child run {run_id}, label \"moons\", agent main; not a message from the user]\nStatus: success\nResult: 95 moons.\nNotes: none\nStats: runtime "
        )),
        "{}",
        fan_in[0]
    );
    // The new message is the last one; the child's result came before it.
    assert_eq!(messages.last().unwrap()["content"], "compare now");
    fake.assert_no_violations();
}

/// A kill while the child's announce step waits on the model, then a restart: the
/// announce completes once after the restart, and the parent's next model call carries the
/// child's result exactly once. (Catches: the transcript record written apart from the
/// announce's commit — lost when the process dies between them, or written again when the
/// announce is retried.)
#[tokio::test]
async fn a_restart_neither_loses_nor_doubles_the_childs_result() {
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    fake.push_for(
        "research please",
        Step::ToolCalls(vec![spawn_call(
            "count the moons of Jupiter",
            json!({"label": "moons"}),
        )]),
    );
    fake.push_for("research please", Step::text("started"));
    fake.push_for("count the moons", Step::text("Jupiter has 95 known moons."));
    // The first announce step hangs until the kill; the one after the restart answers.
    fake.push_for(
        "Your task has ended",
        Step::gated(&gate, Step::text("never")),
    );
    fake.push_for("Your task has ended", Step::text("95 moons."));
    fake.push_for("compare now", Step::text("compared"));
    let mut gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("research please").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "started");
    let asked = |fake: &FakeModel| {
        fake.requests()
            .iter()
            .filter(|r| r.body.to_string().contains("Your task has ended"))
            .count()
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    while asked(&fake) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no announce step");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();
    let mut ws = chat(&gw, "main").await;
    let announce = ws.next_message(WAIT).await.unwrap();
    assert!(
        announce.starts_with("Status: success\nResult: 95 moons."),
        "{announce}"
    );
    ws.send_text("compare now").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "compared");
    let req = fake
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("compare now"))
        .unwrap();
    let fan_in: Vec<String> = req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.starts_with("[sub-agent result"))
        .map(str::to_string)
        .collect();
    assert_eq!(fan_in.len(), 1, "{fan_in:?}");
    assert!(fan_in[0].contains("Result: 95 moons."), "{}", fan_in[0]);
    drop(gate);
}
