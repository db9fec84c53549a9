//! Live config reload: a valid edit applies within about a second; an invalid edit is
//! logged and ignored while the old config keeps working.

use std::time::Duration;

use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;

use crate::common::{chat, config_for, start, WAIT};

async fn lane_cap(gw: &switchboard_testkit::harness::Gateway) -> String {
    let text = crate::common::get_text(gw, "/metrics").await;
    text.lines()
        .find(|l| l.starts_with("switchboard_lane_capacity{lane=\"main\"}"))
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn edits_apply_live_and_invalid_edits_are_ignored() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, json!({})).await;
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 4"
    );

    let mark = gw.log_mark();
    gw.write_config(&config_for(
        &fake,
        json!({"agents": {"defaults": {"maxConcurrent": 2}}}),
    ))
    .await
    .unwrap();
    gw.wait_for_log_since(mark, "config reloaded", Duration::from_secs(5))
        .await
        .unwrap();
    gw.wait_for_log_since(mark, "config applied", Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 2"
    );

    let mark = gw.log_mark();
    gw.write_config("{ agents: { defaults: { maxConcurent: 3 } } }")
        .await
        .unwrap();
    gw.wait_for_log_since(mark, "maxConcurent", Duration::from_secs(8))
        .await
        .unwrap();
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 2"
    );
    let mut ws = chat(&gw, "main").await;
    ws.send_text("old config still works").await.unwrap();
    assert_eq!(
        ws.next_message(WAIT).await.unwrap(),
        "echo: old config still works"
    );

    // A half-written file: not applied, and the next complete write is.
    let mark = gw.log_mark();
    tokio::fs::write(gw.config_path(), "{ agents: { defaults: { maxConc")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    tokio::fs::write(
        gw.config_path(),
        config_for(&fake, json!({"agents": {"defaults": {"maxConcurrent": 6}}})),
    )
    .await
    .unwrap();
    gw.wait_for_log_since(mark, "config applied", Duration::from_secs(8))
        .await
        .unwrap();
    assert_eq!(
        lane_cap(&gw).await,
        "switchboard_lane_capacity{lane=\"main\"} 6"
    );
}
