//! Tests of the fake model's Anthropic Messages dialect.

use serde_json::{json, Value};

use super::super::{FakeModel, Step};

#[tokio::test]
async fn anthropic_tool_use_round_trip() {
    let model = FakeModel::start().await.unwrap();
    model.push_for(
        "weather",
        Step::tool_call("get_weather", r#"{"city":"Paris"}"#),
    );
    model.push_for("weather", Step::text("It is sunny in Paris."));
    let client = reqwest::Client::new();
    let send = |body: Value| {
        client
            .post(format!("{}/messages", model.base_url()))
            .header("x-api-key", "sk-ant-test")
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
    };
    let tools = json!([{"name": "get_weather", "description": "Weather in a city",
                        "input_schema": {"type": "object"}}]);
    let mut request = json!({
        "model": "claude-test",
        "max_tokens": 1024,
        "system": "be brief",
        "tools": tools,
        "messages": [{"role": "user", "content": "weather in Paris?"}],
    });
    let answer: Value = send(request.clone()).await.unwrap().json().await.unwrap();
    assert_eq!(
        answer,
        json!({
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "tool_use", "id": "call_1", "name": "get_weather",
                         "input": {"city": "Paris"}}],
            "stop_reason": "tool_use",
            "stop_sequence": null,
            "usage": {"input_tokens": 14, "output_tokens": 6},
        })
    );

    let messages = request["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "assistant", "content": answer["content"]}));
    messages.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"},
    ]}));
    let answer: Value = send(request).await.unwrap().json().await.unwrap();
    assert_eq!(
        answer["content"],
        json!([{"type": "text", "text": "It is sunny in Paris."}])
    );
    assert_eq!(answer["stop_reason"], "end_turn");
    assert_eq!(model.requests()[1].api_key.as_deref(), Some("sk-ant-test"));
    model.assert_no_violations();
}

#[tokio::test]
async fn anthropic_headers_roles_and_results_are_checked() {
    let model = FakeModel::start().await.unwrap();
    let response = reqwest::Client::new()
        .post(format!("{}/v1/messages", model.origin()))
        .json(&json!({"model": "c", "max_tokens": 10, "messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
            {"role": "user", "content": [
                {"type": "text", "text": "hello"},
                {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "?"}]},
        ]}))
        .send()
        .await
        .unwrap();
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["content"][0]["text"], "echo: hello");
    let prefix = "request #0 (/v1/messages): ";
    let expected: Vec<String> = [
        "header `x-api-key` is missing",
        "header `anthropic-version` is missing",
        "messages[0] has role \"assistant\"; the first must be \"user\"",
        "messages[1].content[1]: tool_result comes after other content",
        "messages[2] has the same role (user) as the one before; roles must alternate",
        "messages[2].content[0]: tool_result answers \"t2\", which no earlier assistant message issued",
    ]
    .iter()
    .map(|problem| format!("{prefix}{problem}"))
    .collect();
    assert_eq!(model.violations(), expected);
}

/// The SSE `data` payloads of a streamed answer.
async fn stream_events(response: reqwest::Response) -> Vec<Value> {
    assert_eq!(
        response.headers()["content-type"],
        "text/event-stream",
        "a streamed answer"
    );
    let text = response.text().await.unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// Catches: a fake that cannot stream Messages, never thinks, or lets a client drop or
/// change its thinking block in a tool loop, or send a budget the API refuses.
#[tokio::test]
async fn anthropic_streams_thinks_and_checks_the_thinking_blocks() {
    let model = FakeModel::start().await.unwrap();
    model.push_for(
        "weather",
        Step::tool_call("get_weather", r#"{"city":"Oslo"}"#),
    );
    let client = reqwest::Client::new();
    let send = |body: Value| {
        client
            .post(format!("{}/v1/messages", model.origin()))
            .header("x-api-key", "k")
            .header("anthropic-version", "2023-06-01")
            .json(&body)
            .send()
    };
    let tools = json!([{"name": "get_weather", "input_schema": {"type": "object"}}]);
    let first = json!({"model": "c", "max_tokens": 3000, "stream": true, "tools": tools,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [{"role": "user", "content": "weather?"}]});
    let events = stream_events(send(first.clone()).await.unwrap()).await;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    let thinking: String = events
        .iter()
        .filter(|e| e["delta"]["type"] == "thinking_delta")
        .filter_map(|e| e["delta"]["thinking"].as_str())
        .collect();
    let signature = events
        .iter()
        .find(|e| e["delta"]["type"] == "signature_delta")
        .map(|e| e["delta"]["signature"].clone())
        .unwrap();
    let args: String = events
        .iter()
        .filter(|e| e["delta"]["type"] == "input_json_delta")
        .filter_map(|e| e["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(thinking, "Considering: weather?");
    assert_eq!(args, r#"{"city":"Oslo"}"#);
    model.assert_no_violations();

    let follow_up = |block: Option<Value>| {
        let mut content = vec![
            json!({"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Oslo"}}),
        ];
        if let Some(b) = block {
            content.insert(0, b);
        }
        let mut body = first.clone();
        body["messages"] = json!([
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "cold"}]},
        ]);
        body
    };
    let good = json!({"type": "thinking", "thinking": thinking, "signature": signature});
    send(follow_up(Some(good))).await.unwrap();
    model.assert_no_violations();
    let changed = json!({"type": "thinking", "thinking": "something else", "signature": signature});
    send(follow_up(Some(changed))).await.unwrap();
    send(follow_up(None)).await.unwrap();
    let mut low = follow_up(None);
    low["thinking"]["budget_tokens"] = json!(10);
    low["messages"] = json!([{"role": "user", "content": "hi"}]);
    send(low).await.unwrap();
    assert_eq!(
        model.violations(),
        vec![
            "request #2 (/v1/messages): messages[1].content[0]: the thinking block was changed (its signature does not match)".to_string(),
            "request #3 (/v1/messages): messages[1]: with thinking enabled, the assistant message before tool results must start with its thinking block".to_string(),
            "request #4 (/v1/messages): `thinking.budget_tokens` is 10; it must be at least 1024".to_string(),
        ]
    );
}
