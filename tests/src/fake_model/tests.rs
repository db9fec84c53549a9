//! Tests of the fake model, driven over HTTP with reqwest.

#![allow(clippy::unwrap_used)]

mod anthropic;
mod faults;

use std::time::Duration;

use serde_json::{json, Value};

use super::{DefaultReply, FakeModel, Gate, Step, ToolCall};

const WAIT: Duration = Duration::from_secs(5);

fn weather_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "get_weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }})
}

async fn chat(model: &FakeModel, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", model.base_url()))
        .bearer_auth("sk-test")
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn chat_json(model: &FakeModel, body: Value) -> Value {
    let response = chat(model, body).await;
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

fn user(text: &str) -> Value {
    json!({"model": "m", "messages": [{"role": "user", "content": text}]})
}

/// The JSON chunks of an SSE body, checking it ends with `[DONE]`.
fn sse_chunks(text: &str) -> Vec<Value> {
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| event.strip_prefix("data: ").unwrap())
        .collect();
    assert_eq!(events.last(), Some(&"[DONE]"));
    events[..events.len() - 1]
        .iter()
        .map(|event| serde_json::from_str(event).unwrap())
        .collect()
}

#[tokio::test]
async fn echoes_the_last_user_message_by_default() {
    let model = FakeModel::start().await.unwrap();
    let answer = chat_json(
        &model,
        json!({"model": "gpt-test", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "hello there"}]},
        ]}),
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": super::wire::CREATED,
            "model": "gpt-test",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": "echo: hello there"},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 26, "completion_tokens": 4, "total_tokens": 30},
        })
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].auth.as_deref(), Some("Bearer sk-test"));
    assert_eq!(requests[0].body["model"], "gpt-test");
    assert_eq!(
        (model.in_flight(), model.max_in_flight(), model.dropped()),
        (0, 1, 0)
    );
    model.assert_no_violations();
}

#[tokio::test]
async fn streamed_text_reassembles() {
    let model = FakeModel::start().await.unwrap();
    model.push(Step::delayed(
        Duration::from_millis(10),
        Step::text("Hello from the streaming fake"),
    ));
    let mut request = user("hi");
    request["stream"] = json!(true);
    let response = chat(&model, request).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let chunks = sse_chunks(&response.text().await.unwrap());

    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let pieces: Vec<&str> = chunks
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str())
        .filter(|piece| !piece.is_empty())
        .collect();
    assert!(
        pieces.len() > 1,
        "text should come in several pieces: {pieces:?}"
    );
    assert_eq!(pieces.concat(), "Hello from the streaming fake");
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 7);
    model.assert_no_violations();
}

#[tokio::test]
async fn streamed_tool_call_splits_its_arguments() {
    let model = FakeModel::start().await.unwrap();
    let arguments = r#"{"city":"Paris","unit":"celsius"}"#;
    model.push(Step::ToolCalls(vec![ToolCall::new(
        "get_weather",
        arguments,
    )]));
    let request = json!({
        "model": "m",
        "stream": true,
        "stream_options": {"include_usage": true},
        "tools": [weather_tool()],
        "messages": [{"role": "user", "content": "weather in Paris?"}],
    });
    let text = chat(&model, request).await.text().await.unwrap();
    let chunks = sse_chunks(&text);

    let deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(
        deltas[0],
        &json!({"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": ""}})
    );
    let pieces: Vec<&str> = deltas[1..]
        .iter()
        .map(|delta| {
            assert_eq!(delta["index"], 0);
            delta["function"]["arguments"].as_str().unwrap()
        })
        .collect();
    assert!(pieces.len() > 1, "arguments should be split: {pieces:?}");
    assert_eq!(pieces.concat(), arguments);
    assert_eq!(
        chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
        "tool_calls"
    );
    assert!(
        chunks[chunks.len() - 1]["usage"]["total_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );

    // Answering the call correctly is not a violation.
    let follow_up = json!({
        "model": "m",
        "tools": [weather_tool()],
        "messages": [
            {"role": "user", "content": "weather in Paris?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ],
    });
    let answer = chat_json(&model, follow_up).await;
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "echo: weather in Paris?"
    );
    model.assert_no_violations();
}

#[tokio::test]
async fn status_step_sends_retry_after() {
    let model = FakeModel::start().await.unwrap();
    let body = r#"{"error":{"message":"slow down","type":"rate_limit"}}"#;
    model.push(Step::Status {
        code: 429,
        retry_after: Some(7),
        body: body.to_owned(),
    });
    model.push(Step::Garbage("not json {".to_owned()));

    let response = chat(&model, user("hi")).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.text().await.unwrap(), body);

    let response = chat(&model, user("hi")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "not json {");
    assert_eq!(model.pending_steps(), 0);
}

#[tokio::test]
async fn hang_until_the_client_gives_up_counts_as_dropped() {
    let model = FakeModel::start().await.unwrap();
    model.push(Step::Hang);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let error = client
        .post(format!("{}/chat/completions", model.base_url()))
        .json(&user("hi"))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
    model.wait_for_dropped(1, WAIT).await.unwrap();
    assert_eq!((model.dropped(), model.in_flight()), (1, 0));
}

/// A gated step answers only once the test opens its gate; a gate opened before the
/// request lets it through at once.
#[tokio::test]
async fn a_gated_step_answers_once_its_gate_is_open() {
    let model = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    model.push(Step::gated(&gate, Step::text("let through")));
    let pending = tokio::spawn({
        let model = model.clone();
        async move { chat_json(&model, user("hi")).await }
    });
    model.wait_for_requests(1, WAIT).await.unwrap();
    assert_eq!(model.in_flight(), 1);
    assert!(!pending.is_finished() && !gate.is_open());
    gate.open();
    let answer = tokio::time::timeout(WAIT, pending).await.unwrap().unwrap();
    assert_eq!(answer["choices"][0]["message"]["content"], "let through");
    model.push(Step::gated(&gate, Step::text("open already")));
    let answer = chat_json(&model, user("again")).await;
    assert_eq!(answer["choices"][0]["message"]["content"], "open already");
}

#[tokio::test]
async fn client_leaving_a_delayed_stream_counts_as_dropped() {
    let model = FakeModel::start().await.unwrap();
    model.push(Step::delayed(
        Duration::from_secs(60),
        Step::text("too late"),
    ));
    let mut request = user("hi");
    request["stream"] = json!(true);
    // Headers come at once; the first chunk waits for the delay.
    let response = chat(&model, request).await;
    assert_eq!(response.status(), 200);
    assert_eq!(model.in_flight(), 1);
    drop(response);
    model.wait_for_dropped(1, WAIT).await.unwrap();
    assert_eq!((model.dropped(), model.in_flight()), (1, 0));
}

#[tokio::test]
async fn counts_concurrent_requests_and_shuts_down() {
    let model = FakeModel::start().await.unwrap();
    model.set_default(DefaultReply::Step(Step::Hang));
    let clients: Vec<_> = (0..3)
        .map(|_| {
            let model = model.clone();
            tokio::spawn(async move { chat(&model, user("hi")).await.status() })
        })
        .collect();
    model.wait_for_requests(3, WAIT).await.unwrap();
    assert_eq!((model.in_flight(), model.max_in_flight()), (3, 3));

    model.shutdown().await;
    for client in clients {
        assert_eq!(client.await.unwrap(), 503);
    }
    assert_eq!((model.in_flight(), model.dropped()), (0, 0));
    let refused = reqwest::Client::new()
        .post(format!("{}/chat/completions", model.base_url()))
        .json(&user("hi"))
        .send()
        .await;
    assert!(refused.is_err());
}

#[tokio::test]
async fn orphan_tool_message_is_a_violation() {
    let model = FakeModel::start().await.unwrap();
    let answer = chat_json(
        &model,
        json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "call_9", "content": "result"},
        ]}),
    )
    .await;
    assert_eq!(answer["choices"][0]["message"]["content"], "echo: hi");
    assert_eq!(
        model.violations(),
        [
            "request #0 (/v1/chat/completions): messages[1] (tool) answers tool_call_id \
             \"call_9\", which no earlier assistant message issued"
        ]
    );
}

#[tokio::test]
async fn tool_call_pairing_and_offered_tools_are_checked() {
    let model = FakeModel::start().await.unwrap();
    let call = |id: &str, name: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": "{}"}});
    chat_json(
        &model,
        json!({"model": "", "tools": [weather_tool()], "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [call("a", "get_weather"), call("b", "rm_rf")]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {"role": "user", "content": "and?"},
            {"role": "assistant", "tool_calls": [call("a", "get_weather")]},
        ]}),
    )
    .await;
    let prefix = "request #0 (/v1/chat/completions): ";
    let expected: Vec<String> = [
        "`model` is missing or not a non-empty string",
        "messages[1].tool_calls[1] calls \"rm_rf\", which is not an offered tool",
        "tool calls [\"b\"] are not answered before messages[3] (user)",
        "messages[4].tool_calls[0] reuses tool call id \"a\"",
    ]
    .iter()
    .map(|problem| format!("{prefix}{problem}"))
    .collect();
    assert_eq!(model.violations(), expected);

    let response = chat(&model, json!("not an object")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        model.violations()[4..],
        ["request #1 (/v1/chat/completions): body is not a JSON object"]
    );
}

#[tokio::test]
async fn trigger_scripts_take_precedence_over_the_global_script() {
    let model = FakeModel::start().await.unwrap();
    model.push(Step::text("global"));
    model.push_for(
        "weather",
        Step::tool_call("get_weather", r#"{"city":"Oslo"}"#),
    );
    model.push_for("weather", Step::text("it is sunny"));

    let answer = chat_json(&model, user("hi")).await;
    assert_eq!(answer["choices"][0]["message"]["content"], "global");
    let answer = chat_json(&model, user("hi")).await;
    assert_eq!(answer["choices"][0]["message"]["content"], "echo: hi");

    let question = json!({"role": "user", "content": "what is the weather in Oslo?"});
    let mut request = json!({"model": "m", "tools": [weather_tool()], "messages": [question]});
    let answer = chat_json(&model, request.clone()).await;
    let message = answer["choices"][0]["message"].clone();
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        message["tool_calls"],
        json!([{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": r#"{"city":"Oslo"}"#}}])
    );

    // The follow-up's last user message is still the question, so its trigger still applies.
    let messages = request["messages"].as_array_mut().unwrap();
    messages.push(message);
    messages.push(json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny, 20C"}));
    let answer = chat_json(&model, request).await;
    assert_eq!(answer["choices"][0]["message"]["content"], "it is sunny");
    assert_eq!(model.pending_steps(), 0);
    model.assert_no_violations();
}

#[tokio::test]
async fn an_unchecked_model_answers_and_records_without_checking() {
    let model = FakeModel::start_unchecked().await.unwrap();
    model.push_for("weather", Step::text("It is sunny."));
    let body = json!({"model": "m", "tools": [weather_tool(), weather_tool()], "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "tool", "tool_call_id": "call_9", "content": "result"},
    ]});
    let answer = chat_json(&model, body.clone()).await;
    assert_eq!(answer["choices"][0]["message"]["content"], "It is sunny.");
    let streamed = chat(
        &model,
        json!({"model": "m", "stream": true, "messages": [
            {"role": "user", "content": "hi"},
        ]}),
    )
    .await
    .text()
    .await
    .unwrap();
    let text: String = sse_chunks(&streamed)
        .iter()
        .filter_map(|chunk| {
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "echo: hi");
    // Recorded whole (the log keeps the body as it came), never checked.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, body);
    assert!(model.violations().is_empty());
}
