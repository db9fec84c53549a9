//! The model-facing `subagents` tool end to end: a parent spawns two children, waits for
//! them in the same turn, and gets their results back as the tool result.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};

use crate::common::{answer_and_announces, chat, start};
use crate::subagents::spawn_call;

/// `subagents {action: "wait"}` blocks until every child this turn spawned (also one that
/// already ended before the call) and every active one has ended and announced, and returns each one normalized (state, status, result); children are
/// not offered the tool. (Catches: a parent that cannot collect its children's results
/// within its turn, `wait` returning before they settled, or a child that ended before the
/// call left out of the results.)
#[tokio::test]
async fn a_parent_waits_for_its_children_and_gets_their_results() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "fan out",
        Step::ToolCalls(vec![
            spawn_call("count the moons", json!({"label": "moons"})),
            spawn_call("count the rings", json!({"label": "rings"})),
        ]),
    );
    fake.push_for(
        "fan out",
        Step::ToolCalls(vec![ToolCall::new(
            "subagents",
            r#"{"action": "wait", "timeoutSeconds": 60}"#,
        )]),
    );
    fake.push_for("fan out", Step::text("compared"));
    fake.push_for("count the moons", Step::text("95 moons"));
    fake.push_for("count the rings", Step::text("4 rings"));
    fake.push_for("Your task has ended", Step::text("RESULT-A"));
    fake.push_for("Your task has ended", Step::text("RESULT-B"));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("fan out").await.unwrap();
    let (answer, _) = answer_and_announces(&mut ws, 2).await;
    assert_eq!(answer, "compared");

    // The request after the wait: its last message is the wait's result.
    let req = fake
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("fan out"))
        .find(|r| {
            let last = r.body["messages"].as_array().unwrap().last().unwrap();
            last["role"] == "tool" && last["content"].as_str().unwrap().contains("timedOut")
        })
        .unwrap();
    let last = req.body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let waited: Value = serde_json::from_str(last["content"].as_str().unwrap()).unwrap();
    assert_eq!(waited["timedOut"], false, "{waited}");
    let children = waited["subagents"].as_array().unwrap();
    assert_eq!(children.len(), 2, "{waited}");
    for c in children {
        assert_eq!(
            (c["state"].as_str(), c["status"].as_str()),
            (Some("done"), Some("success")),
            "{c}"
        );
    }
    let results: BTreeSet<&str> = children
        .iter()
        .map(|c| c["result"].as_str().unwrap())
        .collect();
    assert_eq!(results, BTreeSet::from(["RESULT-A", "RESULT-B"]));
    let labels: BTreeSet<&str> = children
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, BTreeSet::from(["moons", "rings"]));

    // Children are not offered the tool.
    let child = fake
        .requests()
        .into_iter()
        .find(|r| {
            r.body.to_string().contains("count the moons")
                && !r.body.to_string().contains("fan out")
        })
        .unwrap();
    let tools: Vec<&str> = child.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(!tools.contains(&"subagents"), "{tools:?}");
    fake.assert_no_violations();
}
