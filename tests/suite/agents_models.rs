//! Agents and models end to end: `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` used by providers
//! that name no key, the Anthropic Messages provider, `subagents.allowAgents` (a list and
//! `"*"`) and the `agents_list` tool.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};

use crate::common::{answer_and_announces, chat, BIN, WAIT};
use crate::subagents::spawn_call;

/// The tool results answering the tool calls of the turn started by a message containing
/// `marker`: those after the last user message of the request that followed them.
fn tool_results(fake: &FakeModel, marker: &str) -> Vec<Value> {
    let req = fake
        .requests()
        .into_iter()
        .find(|r| {
            let messages = r.body["messages"].as_array().unwrap();
            let last_user = messages.iter().rposition(|m| m["role"] == "user");
            last_user.is_some_and(|i| {
                messages[i]["content"]
                    .as_str()
                    .is_some_and(|c| c.contains(marker))
            }) && messages.last().is_some_and(|m| m["role"] == "tool")
        })
        .unwrap_or_else(|| panic!("no follow-up request for {marker:?}"));
    let messages = req.body["messages"].as_array().unwrap();
    let last_user = messages.iter().rposition(|m| m["role"] == "user").unwrap();
    messages[last_user..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let content = m["content"].as_str().unwrap();
            serde_json::from_str(content).unwrap_or_else(|_| Value::from(content))
        })
        .collect()
}

async fn gateway(fake: &FakeModel) -> Gateway {
    let config = json!({
        "gateway": {"port": 0, "shutdownGrace": "2s"},
        "models": {"providers": {
            "oa": {"api": "openai-chat", "baseUrl": fake.base_url(), "models": [{"id": "gpt-x"}]},
            "an": {"api": "anthropic", "baseUrl": fake.origin(), "models": [{"id": "claude-x"}]},
        }},
        "agents": {
            "defaults": {"model": "oa/gpt-x"},
            "list": [
                {"id": "main", "subagents": {"allowAgents": ["writer"]}},
                // Its own runs and the sub-agents spawned under it use the Anthropic model.
                {"id": "writer", "model": "an/claude-x", "subagents": {"model": "an/claude-x"}},
                {"id": "boss", "subagents": {"allowAgents": ["*"]}},
            ],
        },
    });
    GatewayBuilder::new(BIN)
        .config(config.to_string())
        .env("OPENAI_API_KEY", "sk-env-openai")
        .env("ANTHROPIC_API_KEY", "sk-env-anthropic")
        .start()
        .await
        .unwrap()
}

/// A provider without an `apiKey` sends the key from the daemon's environment; a child
/// spawned under an agent whose sub-agents use an Anthropic model talks Messages (its run
/// and its announce step); `allowAgents` lets an agent spawn only under the agents it lists, `"*"`
/// under every configured one, and `agents_list` says which. (Catches: the env keys read
/// but not sent, the Anthropic client's wire shape, `allowAgents` or `"*"` ignored, or
/// `agents_list` listing another set than the spawn allows.)
#[tokio::test]
async fn env_keys_anthropic_and_the_agents_an_agent_may_spawn() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "who may I spawn",
        Step::ToolCalls(vec![ToolCall::new("agents_list", "{}")]),
    );
    fake.push_for("who may I spawn", Step::text("listed"));
    fake.push_for(
        "get writing",
        Step::ToolCalls(vec![
            spawn_call("draft a poem", json!({"agentId": "writer"})),
            spawn_call("run the show", json!({"agentId": "boss"})),
        ]),
    );
    fake.push_for("get writing", Step::text("spawned"));
    fake.push_for(
        "boss around",
        Step::ToolCalls(vec![ToolCall::new("agents_list", "{}")]),
    );
    fake.push_for("boss around", Step::text("listed all"));
    let gw = gateway(&fake).await;

    let mut ws = chat(&gw, "main").await;
    ws.send_text("who may I spawn?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "listed");
    let listed = tool_results(&fake, "who may I spawn");
    let allowed: Vec<&Value> = listed[0]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["allowed"] == true)
        .collect();
    assert_eq!(
        allowed,
        [
            &json!({"id": "writer", "name": "writer", "description": null, "aliases": [], "allowed": true, "self": false})
        ]
    );

    ws.send_text("get writing").await.unwrap();
    let (answer, got) = answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "spawned");
    assert!(
        got[0].starts_with("Status: success\nResult: echo: Your task has ended."),
        "{}",
        got[0]
    );
    let results = tool_results(&fake, "get writing");
    assert_eq!(results[0]["status"], "accepted", "{results:?}");
    assert_eq!(
        results[1],
        json!("error: agentId `boss` is not allowed for this agent; allowed: writer")
    );

    // Every OpenAI call carried the env key; the writer's (its run and its announce step)
    // went to the Anthropic endpoint with the other one.
    let requests = fake.requests();
    let (anthropic, openai): (Vec<_>, Vec<_>) =
        requests.iter().partition(|r| r.path == "/v1/messages");
    assert_eq!(anthropic.len(), 2, "the child's run and its announce step");
    for r in &anthropic {
        assert_eq!(r.api_key.as_deref(), Some("sk-env-anthropic"));
        assert_eq!(r.body["model"], "claude-x");
    }
    assert!(anthropic[0].body.to_string().contains("draft a poem"));
    for r in &openai {
        assert_eq!(r.auth.as_deref(), Some("Bearer sk-env-openai"));
        assert_eq!(r.body["model"], "gpt-x");
    }

    // "*": every agent (the configured ones and the built-ins).
    let answer: Value = gw
        .http()
        .post(format!(
            "{}/api/sessions/agent:boss:main/messages",
            gw.base_url()
        ))
        .json(&json!({"text": "boss around", "wait": true}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["reply"], "listed all", "{answer}");
    let ids: Vec<(String, bool)> = tool_results(&fake, "boss around")[0]["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["allowed"], true, "{a}");
            (a["id"].as_str().unwrap().to_string(), a["self"] == true)
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("boss".to_string(), true),
            ("explore".to_string(), false),
            ("general".to_string(), false),
            ("main".to_string(), false),
            ("plan".to_string(), false),
            ("writer".to_string(), false),
        ]
    );
    fake.assert_no_violations();
}
