//! The blocking `task` tool end to end: children run to their end and their answers come
//! back as the tool result, in parallel within one model answer, on the web chat and on
//! Telegram; `/stop` and the parent's run timeout stop the child; a restart resumes the
//! parent, which waits for the same child again.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, RecordedRequest, Step, ToolCall};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};

use crate::common::{chat, config_for, get_json, start, BIN, WAIT};
use crate::telegram::{ann, TOKEN};

/// A `task` call.
pub(crate) fn task_call(description: &str, prompt: &str, extra: Value) -> ToolCall {
    let mut args = json!({"description": description, "prompt": prompt});
    crate::common::merge(&mut args, &extra);
    ToolCall::new("task", args.to_string())
}

/// The tool results of the first request whose last user text contains `trigger` and
/// whose last message is a tool result, in order.
fn tool_results(fake: &FakeModel, trigger: &str) -> Vec<String> {
    let req: RecordedRequest = fake
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains(trigger))
        .find(|r| r.body["messages"].as_array().unwrap().last().unwrap()["role"] == "tool")
        .unwrap();
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

/// The children of `requester`, polled (bounded) until `done` holds for every one.
async fn children_when(gw: &Gateway, requester: &str, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let v = get_json(gw, &format!("/api/subagents?requester={requester}")).await;
        let rows = v["subagents"].as_array().unwrap().clone();
        if !rows.is_empty() && rows.iter().all(&done) {
            return rows;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "children never settled: {v}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

/// Two `task` calls in one answer: both children are on the model at once (each child's
/// call is held on one gate that opens only when both arrived), and the parent's next call
/// carries both answers as `<task_result>` in the model's order. No announce step and no
/// chat announce for task children; children are not offered `task`. (Catches: task calls
/// run one after the other, a result in another shape or order, a task child announcing
/// to the chat, or a child able to nest.)
#[tokio::test]
async fn two_tasks_of_one_answer_run_in_parallel_and_answer_as_tool_results() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "compare two planets",
        Step::ToolCalls(vec![
            task_call("mars", "research planet mars", json!({})),
            task_call(
                "venus",
                "research planet venus",
                json!({"agentId": "explore"}),
            ),
        ]),
    );
    fake.push_for("compare two planets", Step::text("Venus is hotter."));
    let gate = Gate::new();
    for p in ["mars", "venus"] {
        fake.push_for(
            &format!("research planet {p}"),
            Step::Gated(gate.clone(), Box::new(Step::text(format!("{p} facts")))),
        );
    }
    let gw = start(
        &fake,
        json!({"agents": {"list": [{"id": "main", "subagents": {"allowAgents": ["*"]}}]}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("compare two planets").await.unwrap();
    // The parent's call, then both children's: only if they run at the same time.
    fake.wait_for_requests(3, WAIT).await.unwrap();
    gate.open();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "Venus is hotter.");
    assert_eq!(
        tool_results(&fake, "compare two planets"),
        vec![
            "<task_result agent=\"main\">mars facts</task_result>".to_string(),
            "<task_result agent=\"explore\">venus facts</task_result>".to_string(),
        ]
    );
    let rows = children_when(&gw, "agent:main:main", |r| r["announceState"] == "skipped").await;
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r["outcome"], "success", "{r}");
    }
    assert!(!fake
        .requests()
        .iter()
        .any(|r| r.body.to_string().contains("Your task has ended")));
    let child = fake
        .requests()
        .into_iter()
        .find(|r| {
            r.body.to_string().contains("research planet mars")
                && !r.body.to_string().contains("compare")
        })
        .unwrap();
    let tools: Vec<&str> = child.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(!tools.contains(&"task"), "{tools:?}");
    fake.assert_no_violations();
}

/// On Telegram: the child's answer reaches the parent as its tool result and the chat gets
/// the parent's answer only; a child that fails comes back as `<task_error>` with why.
/// (Catches: a task child's announce posted to a real channel, or a failed child's error
/// lost.)
#[tokio::test]
async fn on_telegram_the_chat_gets_the_parents_answer_only() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    fake.push_for(
        "ask the explorer",
        Step::ToolCalls(vec![
            task_call("look", "look around the repo", json!({})),
            task_call("fail", "break on purpose", json!({})),
        ]),
    );
    fake.push_for("ask the explorer", Step::text("The repo has a README."));
    fake.push_for("look around the repo", Step::text("a README"));
    fake.push_for(
        "break on purpose",
        Step::Status {
            code: 400,
            retry_after: None,
            body: r#"{"error": {"message": "bad request"}}"#.into(),
        },
    );
    let config = config_for(
        &fake,
        json!({"channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
            "allowFrom": ["42"], "pollTimeoutSeconds": 1}}}),
    );
    let gw = GatewayBuilder::new(BIN)
        .config(config)
        .start()
        .await
        .unwrap();
    tg.user_message(Chat::private(42), ann(), "ask the explorer");
    let sent = tg.wait_for_sent(1, WAIT).await.unwrap();
    assert_eq!(sent[0].text, "The repo has a README.");
    let results = tool_results(&fake, "ask the explorer");
    assert_eq!(
        results[0],
        "<task_result agent=\"main\">a README</task_result>"
    );
    assert!(
        results[1].starts_with("<task_error agent=\"main\">error: ")
            && results[1].ends_with("</task_error>"),
        "{}",
        results[1]
    );
    let rows = children_when(&gw, "agent:main:main", |r| r["announceState"] == "skipped").await;
    assert_eq!(rows.len(), 2);
    // Every child is settled without an announce: nothing more reaches the chat.
    assert_eq!(tg.sent_messages().len(), 1);
}

/// `/stop` in the parent's chat while it waits on a task: the child's model call is
/// dropped, the child ends `cancelled`, and the parent's turn ends. (Catches: a child left
/// running after its requester was stopped.)
#[tokio::test]
async fn stop_of_the_parent_stops_its_task_child() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![task_call("slow", "slow child", json!({}))]),
    );
    fake.push_for("slow child", Step::Hang);
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("delegate").await.unwrap();
    fake.wait_for_requests(2, WAIT).await.unwrap();
    ws.send_text("/stop").await.unwrap();
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    let rows = children_when(&gw, "agent:main:main", |r| r["outcome"].is_string()).await;
    assert_eq!(rows[0]["outcome"], "cancelled", "{}", rows[0]);
}

/// The parent's run timeout bounds the task: the parent ends as timed out and its child is
/// stopped, its Notes saying why. (Catches: a child outliving the run waiting for it.)
#[tokio::test]
async fn the_parents_run_timeout_stops_its_task_child() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![task_call("slow", "slow child", json!({}))]),
    );
    fake.push_for("slow child", Step::Hang);
    let gw = start(&fake, json!({"agents": {"defaults": {"timeout": "2s"}}})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("delegate").await.unwrap();
    let rows = children_when(&gw, "agent:main:main", |r| r["outcome"].is_string()).await;
    assert_eq!(rows[0]["outcome"], "cancelled", "{}", rows[0]);
    assert_eq!(
        rows[0]["stopNote"],
        "stopped: the run that started this task ended before it (stopped or timed out)"
    );
    fake.wait_for_dropped(1, WAIT).await.unwrap();
}

/// A kill while the parent waits on its task child, then a restart: the child resumes, the
/// parent resumes and waits for that same child (no second one is created), and its answer
/// reaches the chat. (Catches: a resumed parent spawning a duplicate child, or dropping
/// the open task call as "interrupted".)
#[tokio::test]
async fn a_restart_resumes_the_parent_which_waits_for_the_same_child() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![task_call("moons", "count the moons", json!({}))]),
    );
    fake.push_for("delegate", Step::text("Saturn wins."));
    fake.push_for("count the moons", Step::Hang);
    fake.push_for("count the moons", Step::text("146 moons"));
    let mut gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("delegate").await.unwrap();
    fake.wait_for_requests(2, WAIT).await.unwrap();
    gw.kill().await.unwrap();
    gw.restart().await.unwrap();
    let mut ws2 = chat(&gw, "main").await;
    drop(ws);
    assert_eq!(ws2.next_message(WAIT).await.unwrap(), "Saturn wins.");
    assert_eq!(
        tool_results(&fake, "delegate"),
        vec!["<task_result agent=\"main\">146 moons</task_result>".to_string()]
    );
    let rows = children_when(&gw, "agent:main:main", |r| r["outcome"].is_string()).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    fake.assert_no_violations();
}
