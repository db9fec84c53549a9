//! A run's limits end it with a notice in its chat: `agents.defaults.maxSteps` and the
//! whole-run `timeout` (the step timeout and model failures: `faults_model.rs`).

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};

use crate::common::{chat, start, WAIT};

/// A model that keeps asking for tools is stopped after `maxSteps` calls, and a run past
/// its `timeout` is ended; each says so in the chat and the gateway goes on. (Catches:
/// the step limit not enforced or off by one, a limit hit without a notice, the run
/// timeout not applied.)
#[tokio::test]
async fn the_step_limit_and_the_run_timeout_end_the_run_with_a_notice() {
    let fake = FakeModel::start().await.unwrap();
    for _ in 0..3 {
        fake.push_for(
            "loop forever",
            Step::ToolCalls(vec![ToolCall::new("sessions_list", "{}")]),
        );
    }
    fake.push_for("never ends", Step::Hang);
    let gw = start(
        &fake,
        json!({"agents": {"defaults": {"maxSteps": 2, "timeout": "2s"}}}),
    )
    .await;
    let mut ws = chat(&gw, "steps").await;
    ws.send_text("loop forever").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "⚠️ stopped after 2 model calls (agents.defaults.maxSteps)"
    );
    assert_eq!(fake.request_count(), 2);

    let mut ws = chat(&gw, "slow").await;
    ws.send_text("never ends").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "⚠️ the run timed out after 2s"
    );
    fake.wait_for_dropped(1, WAIT).await.unwrap();
    ws.send_text("still there?").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "echo: still there?");
}
