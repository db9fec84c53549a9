//! The main journeys against the fake model's Anthropic Messages endpoint, streamed (a
//! turn, a tool call, a spawn and its announce, on Telegram), and `thinking` reaching the
//! providers: Anthropic extended thinking with its budget (and the thinking blocks sent
//! back in a tool loop), OpenAI-compatible `reasoning_effort`.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, RecordedRequest, Step, ToolCall};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};
use switchboard_testkit::harness::GatewayBuilder;

use crate::common::{answer_and_announces, chat, config_for, BIN, WAIT};
use crate::subagents::spawn_call;
use crate::telegram::{ann, TOKEN};

/// The requests whose body mentions `marker`.
fn requests_with(fake: &FakeModel, marker: &str) -> Vec<RecordedRequest> {
    fake.requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains(marker))
        .collect()
}

/// On Telegram with an Anthropic model: a plain turn, a turn with a tool call, and a spawn
/// whose child (thinking `medium` from `agents.defaults.subagents.thinking`) makes a tool
/// call and announces. Every Messages call streams; the child's calls enable thinking with
/// the medium budget and send its thinking block back, unchanged and first, with the tool
/// result (the fake checks the signature); the parent's and the announce step's do not
/// think. (Catches: the Anthropic client not streaming, a stream event read wrong, thinking
/// not reaching the child, or a tool-use continuation the real API would refuse.)
#[tokio::test]
async fn anthropic_journeys_stream_and_a_child_thinks_on_telegram() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    fake.push_for("hello there", Step::text("Hi from Claude."));
    fake.push_for(
        "which agents",
        Step::ToolCalls(vec![ToolCall::new("agents_list", "{}")]),
    );
    fake.push_for("which agents", Step::text("Listed them."));
    fake.push_for(
        "start a helper",
        Step::ToolCalls(vec![spawn_call(
            "child task alpha",
            json!({"label": "alpha"}),
        )]),
    );
    fake.push_for("start a helper", Step::text("Helper started."));
    fake.push_for(
        "child task alpha",
        Step::ToolCalls(vec![ToolCall::new("read", r#"{"path": "missing.txt"}"#)]),
    );
    fake.push_for("child task alpha", Step::text("alpha done"));
    let config = config_for(
        &fake,
        json!({
            "models": {"providers": {"an": {"api": "anthropic", "baseUrl": fake.origin(),
                "apiKey": "sk-ant", "models": [{"id": "claude-s"}]}}},
            "agents": {"defaults": {"model": "an/claude-s", "subagents": {"thinking": "medium"}}},
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
                "allowFrom": ["42"], "pollTimeoutSeconds": 1}},
        }),
    );
    let _gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();

    tg.user_message(Chat::private(42), ann(), "hello there");
    assert_eq!(
        tg.wait_for_sent(1, WAIT).await.unwrap()[0].text,
        "Hi from Claude."
    );
    tg.user_message(Chat::private(42), ann(), "which agents?");
    assert_eq!(
        tg.wait_for_sent(2, WAIT).await.unwrap()[1].text,
        "Listed them."
    );
    tg.user_message(Chat::private(42), ann(), "start a helper");
    let sent = tg.wait_for_sent(4, WAIT).await.unwrap();
    let texts: Vec<&str> = sent[2..].iter().map(|m| m.text.as_str()).collect();
    assert!(texts.contains(&"Helper started."), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.starts_with("Status: success")),
        "no announce in {texts:?}"
    );

    let requests = fake.requests();
    assert!(requests.iter().all(|r| r.path == "/v1/messages"));
    assert!(requests.iter().all(|r| r.body["stream"] == true));
    // The tool call's result went back as a tool_result block.
    let listed = requests_with(&fake, "which agents");
    assert!(listed.len() >= 2, "{}", listed.len());
    let last = listed[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert!(last["content"][0]["content"]
        .as_str()
        .unwrap()
        .contains("\"agents\""));

    // The child's two calls think with the medium budget; the second sends the block back.
    let child: Vec<RecordedRequest> = requests
        .iter()
        .filter(|r| r.body.get("thinking").is_some())
        .cloned()
        .collect();
    assert!(child
        .iter()
        .all(|r| r.body.to_string().contains("child task alpha")));
    assert_eq!(child.len(), 2, "{child:#?}");
    for r in &child {
        assert_eq!(
            r.body["thinking"],
            json!({"type": "enabled", "budget_tokens": 8192})
        );
        assert_eq!(r.body["max_tokens"], 8192 + 4096);
    }
    let messages = child[1].body["messages"].as_array().unwrap();
    let assistant = &messages[messages.len() - 2];
    assert_eq!(assistant["content"][0]["type"], "thinking");
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    // Nothing else thinks (the parent's turns, the announce step): only the child's two.
    assert!(requests.len() >= 8, "{}", requests.len());
    tg.assert_no_violations();
    fake.assert_no_violations();
}

/// The reasoning effort of each child's calls on an OpenAI-compatible model.
fn efforts(fake: &FakeModel, task: &str) -> Vec<Value> {
    fake.requests()
        .into_iter()
        .filter(|r| {
            let messages = r.body["messages"].as_array().unwrap();
            let system = messages[0]["content"].as_str().unwrap_or_default();
            !system.contains("reporting back")
                && messages[1]["content"]
                    .as_str()
                    .is_some_and(|c| c.contains(task))
        })
        .map(|r| {
            r.body
                .get("reasoning_effort")
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect()
}

/// On an OpenAI-compatible model, a child's `thinking` becomes `reasoning_effort`: from
/// the agent file (`high`), from the spawn argument over the file (`minimal` → `low`),
/// none for the parent; an unknown level is refused to the model with the accepted ones.
/// (Catches: the level dropped on its way to the provider, the argument not taking
/// precedence, or an invalid level stored and sent.)
#[tokio::test]
async fn thinking_reaches_openai_as_reasoning_effort() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "think hard",
        Step::ToolCalls(vec![
            spawn_call("deep task one", json!({"agentId": "deep"})),
            spawn_call(
                "deep task two",
                json!({"agentId": "deep", "thinking": "minimal"}),
            ),
            spawn_call("deep task three", json!({"thinking": "extreme"})),
        ]),
    );
    fake.push_for("think hard", Step::text("spawned"));
    let config = config_for(
        &fake,
        json!({"agents": {"list": [{"id": "main", "subagents": {"allowAgents": ["*"]}}]}}),
    );
    let gw = GatewayBuilder::new(BIN)
        .config(config)
        .file(
            "agents/deep.md",
            "---\nname: deep\ndescription: Thinks\nthinking: high\n---\nThink it through.\n",
        )
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("think hard").await.unwrap();
    let (answer, announces) = answer_and_announces(&mut ws, 2).await;
    assert_eq!(answer, "spawned");
    assert_eq!(announces.len(), 2, "{announces:?}");

    assert_eq!(efforts(&fake, "deep task one"), vec![json!("high")]);
    assert_eq!(efforts(&fake, "deep task two"), vec![json!("low")]);
    let parent: Vec<Value> = requests_with(&fake, "think hard")
        .iter()
        .map(|r| {
            r.body
                .get("reasoning_effort")
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect();
    assert!(parent.iter().all(Value::is_null), "{parent:?}");
    let refused = requests_with(&fake, "extreme")
        .into_iter()
        .filter_map(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .filter_map(|m| m["content"].as_str().map(str::to_string))
                .find(|c| c.contains("thinking"))
        })
        .next()
        .expect("the refused spawn's result");
    assert_eq!(
        refused,
        "error: `thinking`: unknown thinking level \"extreme\"; accepted: off, minimal, low, medium, high"
    );
    fake.assert_no_violations();
}
