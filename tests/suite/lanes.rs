//! Lanes: different sessions run in parallel; one session's messages serialize.

use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step};

use crate::common::{chat, start, WAIT};

#[tokio::test]
async fn two_sessions_run_in_parallel() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "from a",
        Step::Delay(
            Duration::from_secs(3),
            Box::new(Step::Text("done a".into())),
        ),
    );
    fake.push_for(
        "from b",
        Step::Delay(
            Duration::from_secs(3),
            Box::new(Step::Text("done b".into())),
        ),
    );
    let gw = start(&fake, json!({})).await;
    let mut a = chat(&gw, "room-a").await;
    let mut b = chat(&gw, "room-b").await;
    a.send_text("from a").await.unwrap();
    b.send_text("from b").await.unwrap();
    // Both model calls are made while the first is still waiting on the model.
    fake.wait_for_requests(2, WAIT).await.unwrap();
    assert_eq!(fake.in_flight(), 2);
    assert_eq!(a.next_message(WAIT).await.unwrap(), "done a");
    assert_eq!(b.next_message(WAIT).await.unwrap(), "done b");
}

#[tokio::test]
async fn one_sessions_messages_serialize_in_followup_mode() {
    let fake = FakeModel::start().await.unwrap();
    for i in 1..=3 {
        fake.push_for(
            &format!("msg {i}"),
            Step::Delay(
                Duration::from_millis(300),
                Box::new(Step::Text(format!("reply {i}"))),
            ),
        );
    }
    let gw = start(&fake, json!({"messages": {"queue": {"mode": "followup"}}})).await;
    let mut ws = chat(&gw, "main").await;
    for i in 1..=3 {
        ws.send_text(&format!("msg {i}")).await.unwrap();
    }
    for i in 1..=3 {
        assert_eq!(ws.next_message(WAIT).await.unwrap(), format!("reply {i}"));
    }
    assert_eq!(fake.max_in_flight(), 1);
    fake.assert_no_violations();
}

#[tokio::test]
async fn collect_mode_batches_messages_that_arrive_while_busy() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "first",
        Step::Delay(
            Duration::from_millis(800),
            Box::new(Step::Text("reply to first".into())),
        ),
    );
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("first").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    ws.send_text("second").await.unwrap();
    ws.send_text("third").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "reply to first");
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: third");
    assert_eq!(fake.request_count(), 2, "second and third went in one turn");
    let last = &fake.requests()[1].body;
    let users: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, vec!["first", "second", "third"]);
}

#[tokio::test]
async fn interrupt_mode_aborts_the_running_turn() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("long task", Step::Hang);
    let gw = start(&fake, json!({"messages": {"queue": {"mode": "interrupt"}}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("long task").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    ws.send_text("never mind").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: never mind");
    fake.wait_for_dropped(1, WAIT).await.unwrap();
}

#[tokio::test]
async fn steer_mode_injects_into_the_running_turn() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "plan a trip",
        Step::Delay(
            Duration::from_millis(600),
            Box::new(Step::ToolCalls(vec![
                switchboard_testkit::fake_model::ToolCall::new("sessions_list", "{}"),
            ])),
        ),
    );
    let gw = start(&fake, json!({"messages": {"queue": {"mode": "steer"}}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("plan a trip").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    ws.send_text("make it cheap").await.unwrap();
    // The second model call of the same run sees the steering message.
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: make it cheap");
    assert_eq!(fake.request_count(), 2);
    fake.assert_no_violations();
}
