//! Lanes: different sessions run in parallel; one session's messages serialize; a reply
//! goes to the chat of the message it answers; `/new` ends what waited.

use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{chat, get_json, get_text, start, WAIT};

/// Two sessions' turns run at the same time: both model calls are in flight together.
/// (Catches: one lane slot for everything, or a global lock around runs.)
#[tokio::test]
async fn two_sessions_run_in_parallel() {
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    fake.push_for("from a", Step::gated(&gate, Step::text("done a")));
    fake.push_for("from b", Step::gated(&gate, Step::text("done b")));
    let gw = start(&fake, json!({})).await;
    let mut a = chat(&gw, "room-a").await;
    let mut b = chat(&gw, "room-b").await;
    a.send_text("from a").await.unwrap();
    b.send_text("from b").await.unwrap();
    // Both model calls are made while neither has been answered.
    fake.wait_for_requests(2, WAIT).await.unwrap();
    assert_eq!(fake.in_flight(), 2);
    gate.open();
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

/// Wait (bounded) until `n` messages wait in `key`'s inbox (stored, not yet claimed).
pub(crate) async fn wait_inbox(gw: &Gateway, key: &str, n: i64) {
    let sql = format!("SELECT COUNT(*) FROM inbox WHERE session_key = '{key}'");
    crate::record::wait_db_i64(gw, &sql, n).await;
}

/// In collect mode, messages that arrive while a turn runs go together into the next turn.
/// (Catches: each waiting message getting its own turn, or joining the running one.)
#[tokio::test]
async fn collect_mode_batches_messages_that_arrive_while_busy() {
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    fake.push_for("first", Step::gated(&gate, Step::text("reply to first")));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("first").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    ws.send_text("second").await.unwrap();
    ws.send_text("third").await.unwrap();
    wait_inbox(&gw, "agent:main:main", 2).await;
    gate.open();
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

/// In steer mode a message that arrives while a turn runs joins that turn before its next
/// model call. (Catches: the message queued for a turn of its own.)
#[tokio::test]
async fn steer_mode_injects_into_the_running_turn() {
    let fake = FakeModel::start().await.unwrap();
    let gate = Gate::new();
    fake.push_for(
        "plan a trip",
        Step::gated(
            &gate,
            Step::ToolCalls(vec![switchboard_testkit::fake_model::ToolCall::new(
                "sessions_list",
                "{}",
            )]),
        ),
    );
    let gw = start(&fake, json!({"messages": {"queue": {"mode": "steer"}}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("plan a trip").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    ws.send_text("make it cheap").await.unwrap();
    wait_inbox(&gw, "agent:main:main", 1).await;
    gate.open();
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

/// Wait (bounded) until the main lane has `n` runs queued, from `/metrics`.
async fn wait_queued(gw: &Gateway, n: u64) {
    let line = format!("switchboard_lane_queue_depth{{lane=\"main\"}} {n}");
    for _ in 0..400 {
        if get_text(gw, "/metrics").await.lines().any(|l| l == line) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the main lane never had {n} queued runs");
}

/// In a session shared by several chats, a run's reply and its error notice go to the
/// chat of the newest message it claimed. (Catches: the reply sent to the chat of the
/// message the run was created for; here an HTTP API caller's, which nothing is sent to,
/// so the web chat never got its answer.)
#[tokio::test]
async fn a_reply_goes_to_the_chat_of_the_newest_message_it_answers() {
    let fake = FakeModel::start().await.unwrap();
    let gates = [Gate::new(), Gate::new()];
    for (first, gate) in ["slow one", "slow two"].into_iter().zip(&gates) {
        fake.push_for(
            first,
            Step::gated(gate, Step::Text(format!("done: {first}"))),
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
    wait_inbox(&gw, "agent:main:main", 2).await;
    gates[0].open();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "done: slow one");
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: from the web");

    // The same for an error notice.
    ws.send_text("slow two").await.unwrap();
    fake.wait_for_requests(3, WAIT).await.unwrap();
    post_api(&gw, "again from the api").await;
    ws.send_text("failing from the web").await.unwrap();
    wait_inbox(&gw, "agent:main:main", 2).await;
    gates[1].open();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "done: slow two");
    let notice = ws.next_message(WAIT).await.unwrap();
    assert!(notice.starts_with("⚠️ The model call failed"), "{notice}");
}

/// `/new` ends the runs that waited in the old session: an API caller `wait`ing for one
/// hears `cancelled` at once, and none comes back after a restart. (Catches: `/new`
/// dropping queued runs from the lane without cancelling them in the store: the waiter
/// hung until its timeout and the run ran at the next start.)
#[tokio::test]
async fn new_cancels_the_queued_runs_and_their_waiters_hear_it() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("long first", Step::Hang);
    let mut gw = start(&fake, json!({"gateway": {"shutdownGrace": "200ms"}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("long first").await.unwrap();
    fake.wait_for_requests(1, WAIT).await.unwrap();
    let (http, url) = (
        gw.http(),
        format!("{}/api/sessions/agent:main:main/messages", gw.base_url()),
    );
    let waiter = tokio::spawn(async move {
        let r = http
            .post(url)
            .json(&json!({"text": "queued behind", "wait": true, "timeoutSeconds": 15}))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap())
    });
    wait_queued(&gw, 1).await;
    ws.send_text("/new").await.unwrap();
    let answer = ws.next_message(WAIT).await.unwrap();
    assert!(answer.starts_with("Started a new session."), "{answer}");
    let (code, body) = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the waiter heard at once")
        .unwrap();
    assert_eq!(
        (code, &body["status"]),
        (200, &json!("cancelled")),
        "{body}"
    );
    let id = body["runId"].as_str().unwrap().to_string();
    assert_eq!(
        get_json(&gw, &format!("/api/runs/{id}")).await["status"],
        "cancelled"
    );

    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    gw.restart().await.unwrap();
    assert_eq!(
        get_json(&gw, &format!("/api/runs/{id}")).await["status"],
        "cancelled",
        "not run again after the restart"
    );
    assert_eq!(
        fake.request_count(),
        1,
        "the queued message never reached the model"
    );
}
