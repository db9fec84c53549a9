//! The announce's promises end to end: the child's last reply when the announce step
//! fails, `Status: timeout` past `runTimeoutSeconds`, `archiveAfterMinutes` in minutes (0 =
//! never), an announce to an API session recorded once, and announce steps that do not
//! wait for a `subagent` lane slot.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Gate, Step};
use switchboard_testkit::harness::Gateway;

use crate::common::{answer_and_announces, chat, config_for, get_json, start, WAIT};
use crate::record::{db_i64, outbox, wait_db_i64};
use crate::subagents::spawn_call;

/// The registry row of the child whose task is `task`.
async fn row_of(gw: &Gateway, task: &str) -> Value {
    get_json(gw, "/api/subagents").await["subagents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["task"] == task)
        .cloned()
        .unwrap_or_else(|| panic!("no child {task:?}"))
}

/// When the announce step's model call fails, the announce still goes out, with the
/// child's last reply as its Result. (Catches: the fallback dropped — "Result: (not
/// available)" — or a failed step counted as a failed announce, posting nothing.)
#[tokio::test]
async fn a_failed_announce_step_announces_the_childs_last_reply() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![spawn_call("careful child", json!({}))]),
    );
    fake.push_for("delegate", Step::text("spawned"));
    fake.push_for("careful child", Step::text("found three things"));
    fake.push_for(
        "Your task has ended",
        Step::Status {
            code: 400,
            retry_after: None,
            body: "{\"error\":{\"message\":\"bad request\"}}".into(),
        },
    );
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("delegate it").await.unwrap();
    let (answer, got) = answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "spawned");
    assert!(
        got[0].starts_with("Status: success\nResult: found three things\nNotes: none\nStats: "),
        "{}",
        got[0]
    );
    let row = row_of(&gw, "careful child").await;
    assert_eq!(
        (&row["announceState"], &row["announceAttempts"]),
        (&json!("queued"), &json!(0)),
        "{row}"
    );
}

/// A child past its `runTimeoutSeconds` ends as `timeout` and announces `Status: timeout`
/// with what it says about its partial work. (Catches: the run timeout not applied to
/// children — this one would hang forever —, or its outcome rendered as another status.)
#[tokio::test]
async fn a_child_past_its_run_timeout_announces_status_timeout() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate",
        Step::ToolCalls(vec![spawn_call(
            "slow child",
            json!({"runTimeoutSeconds": 1}),
        )]),
    );
    fake.push_for("delegate", Step::text("spawned"));
    fake.push_for("slow child", Step::Hang);
    fake.push_for("ran out of time", Step::text("got halfway"));
    let gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("delegate it").await.unwrap();
    let (_, got) = answer_and_announces(&mut ws, 1).await;
    assert!(
        got[0].starts_with("Status: timeout\nResult: got halfway\nNotes: "),
        "{}",
        got[0]
    );
    assert!(got[0].contains("timed out after 1s"), "{}", got[0]);
    let row = row_of(&gw, "slow child").await;
    assert_eq!(row["outcome"], "timeout");
    fake.wait_for_dropped(1, WAIT).await.unwrap();
}

/// `archiveAfterMinutes` is minutes: the archive timer is due that many minutes after the
/// run ended; `0` arms no timer and never archives (applied live). (Catches: the minutes
/// taken as seconds or milliseconds, or 0 read as "archive at once".)
#[tokio::test]
async fn archive_after_minutes_is_minutes_and_zero_never_archives() {
    let fake = FakeModel::start().await.unwrap();
    for (parent, child) in [("first job", "child one"), ("second job", "child two")] {
        fake.push_for(parent, Step::ToolCalls(vec![spawn_call(child, json!({}))]));
        fake.push_for(parent, Step::text("spawned"));
    }
    let minutes =
        |m: u64| json!({"agents": {"defaults": {"subagents": {"archiveAfterMinutes": m}}}});
    let gw = start(&fake, minutes(2)).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("first job").await.unwrap();
    answer_and_announces(&mut ws, 1).await;
    let delay = "SELECT s.archive_at - s.ended_at FROM subagent_runs s WHERE s.task = 'child one'";
    let due = "SELECT t.due_at - s.ended_at FROM timers t JOIN subagent_runs s ON t.target = s.child_session_key WHERE s.task = 'child one'";
    assert_eq!(db_i64(&gw, delay).await, 120_000);
    assert_eq!(db_i64(&gw, due).await, 120_000);

    let mark = gw.log_mark();
    gw.write_config(&config_for(&fake, minutes(0)))
        .await
        .unwrap();
    gw.wait_for_log_since(mark, "config applied", WAIT)
        .await
        .unwrap();
    ws.send_text("second job").await.unwrap();
    answer_and_announces(&mut ws, 1).await;
    let row = row_of(&gw, "child two").await;
    assert_eq!(
        (&row["outcome"], &row["archivedAt"]),
        (&json!("success"), &Value::Null)
    );
    let armed = "SELECT COUNT(*) FROM timers t JOIN subagent_runs s ON t.target = s.child_session_key WHERE s.task = 'child two'";
    assert_eq!(
        db_i64(&gw, armed).await,
        0,
        "no timer for archiveAfterMinutes 0"
    );
    assert_eq!(
        db_i64(
            &gw,
            "SELECT archive_at IS NULL FROM subagent_runs WHERE task = 'child two'"
        )
        .await,
        1
    );
}

/// A child spawned from an HTTP API session announces through the outbox too: one row on
/// the `api` channel, recorded sent on its first attempt (the API reads it from the
/// transcript; nothing is sent anywhere). (Catches: the announce of an API session lost or
/// attempted again and again.)
#[tokio::test]
async fn an_announce_to_an_api_session_is_recorded_sent_once() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "delegate via api",
        Step::ToolCalls(vec![spawn_call("api child", json!({}))]),
    );
    fake.push_for("delegate via api", Step::text("spawned"));
    let mut gw = start(&fake, json!({})).await;
    let answer: Value = gw
        .http()
        .post(format!(
            "{}/api/sessions/agent:main:ops/messages",
            gw.base_url()
        ))
        .json(&json!({"text": "delegate via api", "wait": true}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(answer["reply"], "spawned", "{answer}");
    let sent = "SELECT COUNT(*) FROM outbox WHERE key LIKE 'announce:%' AND state = 'sent'";
    wait_db_i64(&gw, sent, 1).await;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    let rows: Vec<(String, String, i64)> = outbox(&gw)
        .await
        .into_iter()
        .map(|r| (r.channel, r.state, r.attempts))
        .collect();
    assert_eq!(rows, [("api".to_string(), "sent".to_string(), 1)]);
}

/// An ended child's announce step runs while a long child holds the only `subagent`
/// slot. (Catches: announce steps queued on the `subagent` lane, where the finished
/// child's announce would wait for the long one to end.)
#[tokio::test]
async fn announce_steps_do_not_wait_for_a_subagent_lane_slot() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "two children",
        Step::ToolCalls(vec![
            spawn_call("quick child", json!({})),
            spawn_call("blocking child", json!({})),
        ]),
    );
    fake.push_for("two children", Step::text("spawned"));
    let gate = Gate::new();
    fake.push_for(
        "blocking child",
        Step::gated(&gate, Step::text("done at last")),
    );
    let gw = start(
        &fake,
        json!({"agents": {"defaults": {"subagents": {"maxConcurrent": 1}}}}),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("two children").await.unwrap();
    // The quick child's announce arrives while the blocking child holds the slot.
    let (answer, got) = answer_and_announces(&mut ws, 1).await;
    assert_eq!(answer, "spawned");
    assert!(
        got[0].contains("Result: echo: Your task has ended."),
        "{}",
        got[0]
    );
    assert_eq!(row_of(&gw, "blocking child").await["outcome"], Value::Null);
    assert!(!gate.is_open());
    gate.open();
    let got = crate::subagents::announces(&mut ws, 1, WAIT).await;
    assert!(got[0].starts_with("Status: success"), "{}", got[0]);
}
