//! The worked example through a real channel fake: on Telegram, "spawn three researchers
//! (an agent file, by its alias), wait, compare", then a follow-up that sees all three
//! results in the parent's transcript.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};
use switchboard_testkit::harness::GatewayBuilder;

use crate::common::{config_for, BIN, WAIT};
use crate::subagents::spawn_call;
use crate::telegram::{ann, TOKEN};

const RESEARCHER: &str = "---\nname: researcher\ndescription: Looks one thing up\n\
aliases: [res]\ntools: [read, web_fetch]\n---\nYou research one planet and answer in one line.\n";

/// Three children of an agent file spawned by alias, a `subagents wait` that returns their
/// three results in the same turn, three announces and the answer in the Telegram chat, and
/// the next turn's model call carrying the three results. (Catches: any link of the
/// "research these three things, then compare" journey missing on a real channel.)
#[tokio::test]
async fn spawn_three_researchers_wait_and_compare_on_telegram() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let planets = ["mars", "venus", "jupiter"];
    fake.push_for(
        "compare three planets",
        Step::ToolCalls(
            planets
                .iter()
                .map(|p| {
                    spawn_call(
                        &format!("research planet {p}"),
                        json!({"agentId": "Res", "label": p}),
                    )
                })
                .collect(),
        ),
    );
    fake.push_for(
        "compare three planets",
        Step::ToolCalls(vec![ToolCall::new("subagents", r#"{"action": "wait"}"#)]),
    );
    fake.push_for(
        "compare three planets",
        Step::text("Jupiter is the biggest."),
    );
    for p in planets {
        fake.push_for(
            &format!("research planet {p}"),
            Step::text(format!("{p} facts")),
        );
    }
    fake.push_for("which one again", Step::text("Jupiter."));
    let config = config_for(
        &fake,
        json!({
            "agents": {"list": [{"id": "main", "subagents": {"allowAgents": ["*"]}}]},
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
                "allowFrom": ["42"], "pollTimeoutSeconds": 1}},
        }),
    );
    let _gw = GatewayBuilder::new(BIN)
        .config(config)
        .file("agents/researcher.md", RESEARCHER)
        .start()
        .await
        .unwrap();

    tg.user_message(Chat::private(42), ann(), "compare three planets");
    let sent = tg.wait_for_sent(4, WAIT).await.unwrap();
    let texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.starts_with("Status: success"))
            .count(),
        3,
        "{texts:?}"
    );
    assert!(texts.contains(&"Jupiter is the biggest."), "{texts:?}");

    // The wait's result: the three children, done.
    let req = fake
        .requests()
        .into_iter()
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
    let labels: BTreeSet<&str> = waited["subagents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["state"] == "done" && c["agentId"] == "researcher")
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        BTreeSet::from(["jupiter", "mars", "venus"]),
        "{waited}"
    );

    // The next turn sees the three results in the transcript.
    tg.user_message(Chat::private(42), ann(), "which one again?");
    let sent = tg.wait_for_sent(5, WAIT).await.unwrap();
    assert_eq!(sent[4].text, "Jupiter.");
    let req = fake
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("which one again"))
        .unwrap();
    let fan_in = req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.starts_with("[sub-agent result") && c.contains("agent researcher"))
        .count();
    assert_eq!(fan_in, 3);
    tg.assert_no_violations();
    fake.assert_no_violations();
}
