//! `/ws` live events per chat (README, Security): a web chat socket sees its own session's events
//! and those of the sub-agents spawned from it, never another chat's or an API session's.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::WsClient;

use crate::common::{chat, start, WAIT};
use crate::subagents::spawn_call;

/// Every frame up to and including the `outbox.sent` event of the socket's next delivery.
async fn frames_until_delivered(ws: &mut WsClient) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let frame = ws.next_frame(WAIT).await.unwrap();
        let done = frame["type"] == "event" && frame["event"]["type"] == "outbox.sent";
        out.push(frame);
        if done {
            return out;
        }
    }
}

fn events(frames: &[Value]) -> Vec<&Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "event")
        .map(|f| &f["event"])
        .collect()
}

/// Asserts that every event in `frames` belongs to `key` (or, for a delivery, to `chat`).
fn only_own(frames: &[Value], key: &str, chat: &str) {
    for ev in events(frames) {
        if ev["type"] == "outbox.sent" {
            assert_eq!(ev["channel"], "webchat", "{ev}");
            assert_eq!(ev["chatId"], chat, "{ev}");
        } else {
            assert_eq!(ev["sessionKey"], key, "{ev}");
        }
    }
}

/// Catches: the event bus fanned out to every socket unfiltered, so any web chat read
/// every other chat's and the API's runs, replies included (`run.ended` carries `reply`).
#[tokio::test]
async fn a_socket_sees_only_its_own_chats_events() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut alpha = chat(&gw, "alpha").await;
    let mut beta = chat(&gw, "beta").await;

    alpha.send_text("secret of alpha").await.unwrap();
    let seen = frames_until_delivered(&mut alpha).await;
    only_own(&seen, "agent:main:webchat:group:alpha", "alpha");
    let types: Vec<&str> = events(&seen)
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    for ty in ["run.started", "run.step", "run.ended", "outbox.sent"] {
        assert!(types.contains(&ty), "{ty} missing from {types:?}");
    }
    let api: Value = gw
        .http()
        .post(format!(
            "{}/api/sessions/agent:main:api-probe/messages",
            gw.base_url()
        ))
        .json(&json!({"text": "secret of the api", "wait": true}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(api["reply"], "echo: secret of the api", "{api}");

    // The bus keeps emit order: whatever beta was sent about alpha's and the API's runs
    // arrives before beta's own delivery.
    beta.send_text("hello from beta").await.unwrap();
    let seen = frames_until_delivered(&mut beta).await;
    only_own(&seen, "agent:main:webchat:group:beta", "beta");
    let text = serde_json::to_string(&seen).unwrap();
    assert!(!text.contains("secret"), "{text}");

    alpha.send_text("again").await.unwrap();
    let seen = frames_until_delivered(&mut alpha).await;
    only_own(&seen, "agent:main:webchat:group:alpha", "alpha");
    assert!(!serde_json::to_string(&seen).unwrap().contains("beta"));
}

/// Catches: a socket losing sight of its sub-agents once events are filtered (children's
/// runs have their own session keys), or another chat seeing them.
#[tokio::test]
async fn a_socket_sees_its_sub_agents_events_and_other_chats_do_not() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "research",
        Step::ToolCalls(vec![spawn_call("count the moons", json!({}))]),
    );
    fake.push_for("research", Step::Text("started.".into()));
    // The child ends only once the late socket below is open.
    let gate = Gate::new();
    fake.push_for(
        "count the moons",
        Step::gated(&gate, Step::text("95 moons.")),
    );
    fake.push_for("Your task has ended", Step::Text("95 moons.".into()));
    let gw = start(&fake, json!({})).await;
    let mut alpha = chat(&gw, "alpha").await;
    let mut beta = chat(&gw, "beta").await;
    alpha.send_text("research please").await.unwrap();
    let child = loop {
        let f = alpha.next_of_type("event", WAIT).await.unwrap();
        let ev = &f["event"];
        if ev["type"] == "subagent.spawned" {
            assert_eq!(ev["sessionKey"], "agent:main:webchat:group:alpha", "{ev}");
            break ev["childSessionKey"].as_str().unwrap().to_string();
        }
    };
    // A socket opened after the spawn learns the child from the store.
    let mut late = chat(&gw, "alpha").await;
    gate.open();
    let ended = loop {
        let f = late.next_of_type("event", WAIT).await.unwrap();
        if f["event"]["type"] == "run.ended" && f["event"]["sessionKey"] == child.as_str() {
            break f;
        }
    };
    assert_eq!(ended["event"]["reply"], "95 moons.", "{ended}");
    let announce = loop {
        let m = alpha.next_message(WAIT).await.unwrap();
        if m.starts_with("Status:") {
            break m;
        }
    };
    assert!(announce.contains("95 moons."), "{announce}");

    beta.send_text("hello from beta").await.unwrap();
    let seen = frames_until_delivered(&mut beta).await;
    only_own(&seen, "agent:main:webchat:group:beta", "beta");
    let text = serde_json::to_string(&seen).unwrap();
    assert!(!text.contains(&child) && !text.contains("moons"), "{text}");
}

/// The operators' stream (`/api/events`, an API route) carries every session's events,
/// an API session's included, which no web chat socket sees. Catches: the stream filtered
/// like a chat's (the bench and operator tools would see nothing), or not there at all.
#[tokio::test]
async fn the_operators_event_stream_sees_every_session() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    let mut all = WsClient::connect(&gw.events_url()).await.unwrap();
    let answer: Value = gw
        .http()
        .post(format!(
            "{}/api/sessions/agent:main:ops/messages",
            gw.base_url()
        ))
        .json(&json!({"text": "for the operators", "wait": true}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["reply"], "echo: for the operators");
    loop {
        let frame = all.next_frame(WAIT).await.unwrap();
        let ev = &frame["event"];
        if ev["type"] == "run.ended" {
            assert_eq!(ev["sessionKey"], "agent:main:ops");
            assert_eq!(ev["reply"], "echo: for the operators");
            break;
        }
    }
}
