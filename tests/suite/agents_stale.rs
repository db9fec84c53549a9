//! The stale-run heartbeat end to end (`agents.defaults.subagents.staleAfter`): a child
//! whose model call shows no output is cancelled, ends `timeout` and says why in its
//! announce; a child whose model streams slowly past the same bound is not stale. The
//! daemon runs with `SWITCHBOARD_TEST_STALE_MIN_MS` (debug builds only) so the bound can be
//! a second instead of the production minimum of 30 s.

use serde_json::json;
use std::time::Duration;
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};
use switchboard_testkit::harness::GatewayBuilder;

use crate::common::{config_for, BIN, WAIT};
use crate::subagents::spawn_call;
use crate::telegram::{ann, TOKEN};

/// A silent child (its model call hangs) ends `timeout` with "stale: no progress for 1s"
/// in its announce's Notes, on Telegram; a child whose answer streams one chunk every
/// 300 ms for longer than that second is not stale and succeeds. (Catches: no heartbeat,
/// one that counts elapsed time rather than silence, or one blind to streamed tokens.)
#[tokio::test]
async fn a_silent_child_goes_stale_and_a_streaming_one_does_not() {
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    fake.push_for(
        "start both",
        Step::ToolCalls(vec![
            spawn_call("silent child", json!({"label": "silent"})),
            spawn_call("streaming child", json!({"label": "streaming"})),
        ]),
    );
    fake.push_for("start both", Step::text("started"));
    fake.push_for("silent child", Step::Hang);
    fake.push_for(
        "streaming child",
        Step::Paced(
            Duration::from_millis(300),
            Box::new(Step::text(
                "a slow but steady answer that streams in many small pieces",
            )),
        ),
    );
    fake.push_for("ran out of time", Step::text("nothing came back"));
    fake.push_for("Your task has ended", Step::text("steady result"));
    let config = config_for(
        &fake,
        json!({
            "agents": {"defaults": {"subagents": {"staleAfter": "1s"}}},
            "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
                "allowFrom": ["42"], "pollTimeoutSeconds": 1}},
        }),
    );
    let _gw = GatewayBuilder::new(BIN)
        .config(config)
        .env("SWITCHBOARD_TEST_STALE_MIN_MS", "100")
        .start()
        .await
        .unwrap();
    tg.user_message(Chat::private(42), ann(), "start both");
    let sent = tg.wait_for_sent(3, WAIT).await.unwrap();
    let texts: Vec<&str> = sent.iter().map(|m| m.text.as_str()).collect();
    let stale = texts
        .iter()
        .find(|t| t.contains("nothing came back"))
        .unwrap_or_else(|| panic!("{texts:?}"));
    assert!(
        stale.starts_with(
            "Status: timeout\nResult: nothing came back\nNotes: stale: no progress for 1s\n"
        ),
        "{stale}"
    );
    let steady = texts
        .iter()
        .find(|t| t.contains("steady result"))
        .unwrap_or_else(|| panic!("{texts:?}"));
    assert!(steady.starts_with("Status: success\n"), "{steady}");
    fake.assert_no_violations();
}
