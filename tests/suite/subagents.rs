//! Sub-agents end to end: spawn → child run → announce in the requester's chat, the
//! `/subagents` commands, `/stop` cascading, the lane cap, and restarts.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::WsClient;

use crate::common::{chat, start, WAIT};

pub(crate) fn spawn_call(task: &str, extra: Value) -> ToolCall {
    let mut args = json!({"task": task});
    crate::common::merge(&mut args, &extra);
    ToolCall::new("sessions_spawn", args.to_string())
}

/// Collect announces (messages starting with "Status:") until `n` arrived.
pub(crate) async fn announces(ws: &mut WsClient, n: usize, timeout: Duration) -> Vec<String> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + timeout;
    while out.len() < n {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let msg = ws
            .next_message(left)
            .await
            .unwrap_or_else(|e| panic!("after {} announces: {e:#}", out.len()));
        if msg.starts_with("Status:") {
            out.push(msg);
        }
    }
    out
}

#[tokio::test]
async fn a_spawn_announces_in_the_requesters_chat_and_is_listed() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "research",
        Step::ToolCalls(vec![spawn_call(
            "count the moons of Jupiter",
            json!({"label": "moons", "thinking": "high"}),
        )]),
    );
    fake.push_for("research", Step::Text("I started a sub-agent.".into()));
    fake.push_for(
        "count the moons",
        Step::Text("Jupiter has 95 known moons.".into()),
    );
    fake.push_for("Your task has ended", Step::Text("95 moons.".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("research please").await.unwrap();
    // The parent's reply and the announce may arrive in either order.
    let (answer, mut got) = crate::common::answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "I started a sub-agent.");
    let announce = got.remove(0);
    let lines: Vec<&str> = announce.lines().collect();
    assert_eq!(lines[0], "Status: success");
    assert_eq!(lines[1], "Result: 95 moons.");
    assert_eq!(lines[2], "Notes: none");
    assert!(
        lines[3].starts_with("Stats: runtime ")
            && lines[3].contains(" • tokens ")
            && lines[3].contains(" • est $"),
        "{announce}"
    );
    assert!(
        lines[3].contains("sessionKey agent:main:subagent:")
            && lines[3].contains("transcript /api/sessions/agent:main:subagent:"),
        "{announce}"
    );

    // The child got no session tools, and only AGENTS.md/TOOLS.md-level prompt.
    let child_req = fake
        .requests()
        .into_iter()
        .find(|r| {
            r.body.to_string().contains("count the moons of Jupiter")
                && !r.body.to_string().contains("research please")
        })
        .unwrap();
    let tools: Vec<String> = child_req.body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        tools
            .iter()
            .all(|t| !t.starts_with("sessions_") && t != "agents_list"),
        "{tools:?}"
    );
    fake.assert_no_violations();

    ws.send_text("/subagents list").await.unwrap();
    let list = ws.next_message(WAIT).await.unwrap();
    assert!(
        list.starts_with("Sub-agents: 0 active, 1 done\n1. success · moons · "),
        "{list}"
    );
    ws.send_text("/subagents info 1").await.unwrap();
    let info = ws.next_message(WAIT).await.unwrap();
    assert!(
        info.contains("Status: success")
            && info.contains("Thinking: high\n")
            && info.contains("Announce: queued")
            && info.contains("Archive: at "),
        "{info}"
    );
    ws.send_text("/subagents info 7").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "No sub-agent #7: this chat has 1."
    );
    ws.send_text("/subagents log 1").await.unwrap();
    let log = ws.next_message(WAIT).await.unwrap();
    assert!(
        log.contains("[user] count the moons of Jupiter")
            && log.contains("[assistant] Jupiter has 95 known moons."),
        "{log}"
    );

    // `?requester=` keeps only that session's children.
    let mine = crate::common::get_json(&gw, "/api/subagents?requester=agent:main:main").await;
    let others = crate::common::get_json(&gw, "/api/subagents?requester=agent:main:other").await;
    assert_eq!(
        (
            mine["subagents"].as_array().unwrap().len(),
            others["subagents"].as_array().unwrap().len()
        ),
        (1, 0)
    );
    let api = crate::common::get_json(&gw, "/api/subagents").await;
    let row = &api["subagents"][0];
    assert_eq!(row["outcome"], "success");
    assert_eq!(row["announceState"], "queued");
    let one: Value = gw
        .http()
        .get(format!(
            "{}/api/subagents/{}",
            gw.base_url(),
            row["runId"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(one["label"], "moons");
}

/// `/stop` after the parent's turn ended still stops the children it spawned, which
/// announce as `unknown` with the stop in their Notes. (Catches: `/stop` looking only at
/// the chat's own run.)
#[tokio::test]
async fn stop_after_the_parent_ended_stops_its_running_children_which_announce_as_unknown() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "fan out",
        Step::ToolCalls(vec![
            spawn_call("slow child one", json!({})),
            spawn_call("slow child two", json!({})),
        ]),
    );
    fake.push_for("fan out", Step::Text("spawned two".into()));
    fake.push_for("slow child", Step::Hang);
    fake.push_for("slow child", Step::Hang);
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("fan out").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "spawned two");
    fake.wait_for_requests(4, WAIT).await.unwrap();
    ws.send_text("/stop").await.unwrap();
    // The command's answer and the two announces may arrive in any order.
    let (answer, got) = crate::common::answer_and_announces(&mut ws, 2).await;
    assert_eq!(answer, "Stopped 0 runs and 2 sub-agents.");
    for a in &got {
        assert!(a.starts_with("Status: unknown\nResult: (not available)\nNotes: stopped by /stop in the requester chat\nStats: "), "{a}");
    }
    fake.wait_for_dropped(2, WAIT).await.unwrap();
}

/// `/stop` while the parent's turn runs: it stops that run, its children queued on a
/// full `subagent` lane (each announces, as `unknown`), and the message waiting for the
/// session, and says so; another chat's child runs on. Checked against the registry, the
/// outbox and the transcript. (Catches, one line each: a queued child removed from its
/// lane without its announce being scheduled; `/stop` stopping every chat's children; the
/// waiting message left to run or not counted.)
#[tokio::test]
async fn stop_ends_the_running_turn_its_queued_children_and_what_waits_in_its_chat_only() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "other work",
        Step::ToolCalls(vec![spawn_call("other child", json!({}))]),
    );
    fake.push_for("other work", Step::Text("spawned other".into()));
    fake.push_for("other child", Step::Hang);
    fake.push_for(
        "fan out",
        Step::ToolCalls(vec![
            spawn_call("queued child one", json!({})),
            spawn_call("queued child two", json!({})),
        ]),
    );
    fake.push_for("fan out", Step::Hang);
    let mut gw = start(
        &fake,
        json!({"agents": {"defaults": {"subagents": {"maxConcurrent": 1}}}}),
    )
    .await;
    // Another chat's child takes the only subagent slot.
    let mut other = chat(&gw, "other").await;
    other.send_text("other work").await.unwrap();
    assert_eq!(other.next_message(WAIT).await.unwrap(), "spawned other");
    fake.wait_for_requests(3, WAIT).await.unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("fan out").await.unwrap();
    // The parent's second call hangs: its turn is running, both children are queued.
    fake.wait_for_requests(5, WAIT).await.unwrap();
    ws.send_text("one more thing").await.unwrap();
    let waiting = "SELECT COUNT(*) FROM inbox WHERE session_key = 'agent:main:main'";
    crate::record::wait_db_i64(&gw, waiting, 1).await;

    ws.send_text("/stop").await.unwrap();
    let (answer, got) = crate::common::answer_and_announces(&mut ws, 2).await;
    assert_eq!(
        answer,
        "Stopped 1 run and 2 sub-agents. Dropped 1 waiting message."
    );
    for a in &got {
        assert!(a.starts_with("Status: unknown\nResult: (not available)\nNotes: stopped by /stop in the requester chat\nStats: "), "{a}");
    }
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    assert_eq!(fake.in_flight(), 1, "the other chat's child still runs");

    let rows = crate::common::get_json(&gw, "/api/subagents").await["subagents"]
        .as_array()
        .unwrap()
        .clone();
    let mut states: Vec<(String, Value, Value)> = rows
        .iter()
        .map(|r| {
            (
                r["task"].as_str().unwrap().to_string(),
                r["outcome"].clone(),
                r["announceState"].clone(),
            )
        })
        .collect();
    states.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        states,
        [
            ("other child".into(), Value::Null, json!("none")),
            (
                "queued child one".into(),
                json!("cancelled"),
                json!("queued")
            ),
            (
                "queued child two".into(),
                json!("cancelled"),
                json!("queued")
            ),
        ]
    );
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    let announces: Vec<(String, i64)> = crate::record::outbox(&gw)
        .await
        .into_iter()
        .filter(|r| r.key.starts_with("announce:"))
        .map(|r| (r.state, r.attempts))
        .collect();
    assert_eq!(
        announces,
        [("sent".to_string(), 1), ("sent".to_string(), 1)]
    );
    assert_eq!(crate::record::db_i64(&gw, waiting).await, 0);
    let child_calls = fake
        .requests()
        .iter()
        .filter(|r| {
            r.body["messages"].as_array().unwrap().iter().any(|m| {
                m["role"] == "user"
                    && m["content"]
                        .as_str()
                        .is_some_and(|c| c.contains("queued child") || c.contains("one more thing"))
            })
        })
        .count();
    assert_eq!(child_calls, 0, "nothing stopped reached the model");
}

#[tokio::test]
async fn spawn_policy_errors_reach_the_model() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "spawn elsewhere",
        Step::ToolCalls(vec![
            spawn_call("x", json!({"agentId": "ops"})),
            spawn_call("y", json!({"model": "nope/none"})),
        ]),
    );
    fake.push_for("spawn elsewhere", Step::Text("ok".into()));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("spawn elsewhere").await.unwrap();
    // The accepted child announces, maybe before the parent's reply.
    let (answer, _) = crate::common::answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "ok");
    // The parent's follow-up call (a child's call may come before it).
    let second = &fake
        .requests()
        .into_iter()
        .find(|r| {
            r.body.to_string().contains("spawn elsewhere")
                && r.body.to_string().contains("\"role\":\"tool\"")
        })
        .unwrap()
        .body;
    let results: Vec<String> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        results[0],
        // `ops` is defined nowhere: the error lists the agents there are (docs/subagents.md, Agents).
        "error: unknown agent `ops`; accepted: explore, general, main, plan"
    );
    let accepted: Value = serde_json::from_str(&results[1]).unwrap();
    assert_eq!(accepted["status"], "accepted");
    assert!(
        accepted["warning"]
            .as_str()
            .unwrap()
            .contains("model `nope/none` was skipped"),
        "{accepted}"
    );
}

#[tokio::test]
async fn fifty_children_with_cap_eight_are_all_announced_once() {
    let fake = FakeModel::start().await.unwrap();
    let calls: Vec<ToolCall> = (0..50)
        .map(|i| spawn_call(&format!("batch child {i}"), json!({})))
        .collect();
    fake.push_for("spawn fifty", Step::ToolCalls(calls));
    fake.push_for("spawn fifty", Step::Text("spawned 50".into()));
    for _ in 0..50 {
        fake.push_for(
            "batch child",
            Step::Delay(
                Duration::from_millis(150),
                Box::new(Step::Text("child done".into())),
            ),
        );
    }
    fake.track_concurrency("batch child");
    let mut gw = start(
        &fake,
        json!({"agents": {"defaults": {"subagents": {"maxConcurrent": 8}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("spawn fifty").await.unwrap();
    let got = announces(&mut ws, 50, Duration::from_secs(120)).await;
    let keys: HashSet<String> = got
        .iter()
        .map(|a| {
            a.split("sessionKey ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(keys.len(), 50, "50 distinct children announced");
    // Children's model calls never exceed the lane cap (the fake sees them).
    let children_at_once = fake.max_in_flight_of("batch child");
    assert!(
        (2..=8).contains(&children_at_once),
        "children in flight at once: {children_at_once}"
    );
    // The record, once the daemon has stopped: one outbox row per child, each delivered
    // on its first attempt, and nothing more on the socket.
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    assert_eq!(
        crate::record::rest_of_socket(&mut ws).await,
        Vec::<String>::new()
    );
    let sent = crate::record::sent_once(&gw).await;
    assert_eq!(sent.iter().filter(|t| t.starts_with("Status:")).count(), 50);
    assert_eq!(sent.len(), 51, "50 announces and the parent's reply");
    fake.assert_no_violations();
}

#[tokio::test]
async fn sigkill_with_queued_children_loses_and_duplicates_nothing() {
    let fake = FakeModel::start().await.unwrap();
    let calls: Vec<ToolCall> = (0..6)
        .map(|i| spawn_call(&format!("durable child {i}"), json!({})))
        .collect();
    fake.push_for("spawn six", Step::ToolCalls(calls));
    fake.push_for("spawn six", Step::Text("spawned 6".into()));
    fake.push_for(
        "durable child",
        Step::Delay(
            Duration::from_millis(200),
            Box::new(Step::Text("first child done".into())),
        ),
    );
    fake.push_for("durable child", Step::Hang);
    let mut gw = start(
        &fake,
        json!({"agents": {"defaults": {"subagents": {"maxConcurrent": 1}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("spawn six").await.unwrap();
    let first = announces(&mut ws, 1, WAIT).await;
    // The second child is blocked in a model call; four are queued.
    fake.wait_for_requests(fake.request_count().max(5), WAIT)
        .await
        .unwrap();
    // Kill only after the outbox has recorded the first announce as sent: a kill between
    // a channel accepting a message and that commit is the one at-least-once window.
    crate::common::wait_outbox_sent(&gw, 2).await;
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();
    let mut ws2 = chat(&gw, "main").await;
    let rest = announces(&mut ws2, 5, Duration::from_secs(60)).await;
    // The full log of both sockets: the first one's up to the kill, the second one's up
    // to a graceful stop.
    let before_kill = crate::record::rest_of_socket(&mut ws).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    let after = crate::record::rest_of_socket(&mut ws2).await;
    let mut keys = HashSet::new();
    let all = first.iter().chain(&rest).chain(&before_kill).chain(&after);
    for a in all.filter(|a| a.starts_with("Status:")) {
        assert!(a.starts_with("Status: success"), "{a}");
        assert!(
            keys.insert(
                a.split("sessionKey ")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            ),
            "announced twice: {a}"
        );
    }
    assert_eq!(keys.len(), 6);
    // The outbox agrees: six announce rows, each sent.
    let rows: Vec<String> = crate::record::outbox(&gw)
        .await
        .into_iter()
        .filter(|r| r.key.starts_with("announce:"))
        .map(|r| r.state)
        .collect();
    assert_eq!(rows, ["sent"; 6]);
}

/// A child that ended in an error or a timeout still gets the announce step, with a prompt
/// that says how it ended: it can sum up its partial work, or answer `ANNOUNCE_SKIP`.
/// (Catches: the step running for `success` only.)
#[tokio::test]
async fn errored_and_timed_out_children_get_the_announce_step() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "two risky tasks",
        Step::ToolCalls(vec![
            spawn_call("failing child", json!({})),
            spawn_call("slow child", json!({"runTimeoutSeconds": 1})),
        ]),
    );
    fake.push_for("two risky tasks", Step::Text("spawned".into()));
    fake.push_for(
        "failing child",
        Step::Status {
            code: 400,
            retry_after: None,
            body: "{\"error\":{\"message\":\"bad request\"}}".into(),
        },
    );
    fake.push_for("slow child", Step::Hang);
    fake.push_for(
        "Your task has ended with an error",
        Step::Text("got halfway".into()),
    );
    fake.push_for(
        "Your task has ended: it ran out of time",
        Step::Text("ANNOUNCE_SKIP".into()),
    );
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("two risky tasks").await.unwrap();
    let (answer, got) = crate::common::answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "spawned");
    assert!(
        got[0].starts_with("Status: error\nResult: got halfway\nNotes: "),
        "{}",
        got[0]
    );
    // The timed-out child answered ANNOUNCE_SKIP: nothing is posted for it.
    let mut skipped = false;
    for _ in 0..200 {
        let rows = crate::common::get_json(&gw, "/api/subagents").await;
        let slow = rows["subagents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["task"] == "slow child")
            .unwrap()
            .clone();
        if slow["announceState"] == "skipped" {
            assert_eq!(slow["outcome"], "timeout");
            skipped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(skipped, "the timed-out child's announce was skipped");
    fake.assert_no_violations();
}
