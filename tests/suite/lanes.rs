//! Lanes: different sessions run in parallel; one session's messages serialize; a reply
//! goes to the chat of the message it answers.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::harness::Gateway;

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

/// POST a message to `agent:main:main` through the API without waiting; its `runId`.
async fn post_api(gw: &Gateway, text: &str) -> Value {
    gw.http()
        .post(format!(
            "{}/api/sessions/agent:main:main/messages",
            gw.base_url()
        ))
        .json(&json!({ "text": text }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// In a session shared by several chats, a run's reply and its error notice go to the
/// chat of the newest message it claimed. (Catches: the reply sent to the chat of the
/// message the run was created for; here an HTTP API caller's, which nothing is sent to,
/// so the web chat never got its answer.)
#[tokio::test]
async fn a_reply_goes_to_the_chat_of_the_newest_message_it_answers() {
    let fake = FakeModel::start().await.unwrap();
    for first in ["slow one", "slow two"] {
        fake.push_for(
            first,
            Step::Delay(
                Duration::from_millis(300),
                Box::new(Step::Text(format!("done: {first}"))),
            ),
        );
    }
    fake.push_for(
        "failing from the web",
        Step::Status {
            code: 400,
            retry_after: None,
            body: "{\"error\":{\"message\":\"bad request\"}}".into(),
        },
    );
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    // A run is busy; the API's message gets a run of its own, which the web chat's next
    // message joins (collect mode): that run answers the web chat.
    ws.send_text("slow one").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    let posted = post_api(&gw, "from the api").await;
    assert!(posted["runId"].is_string(), "{posted}");
    ws.send_text("from the web").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "done: slow one");
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: from the web");

    // The same for an error notice.
    ws.send_text("slow two").await.unwrap();
    fake.wait_for_requests(3, WAIT).await.unwrap();
    post_api(&gw, "again from the api").await;
    ws.send_text("failing from the web").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "done: slow two");
    let notice = ws.next_message(WAIT).await.unwrap();
    assert!(notice.starts_with("⚠️ The model call failed"), "{notice}");
}
