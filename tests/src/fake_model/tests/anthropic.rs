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
