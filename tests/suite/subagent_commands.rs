//! `/subagents stop <#>`, `stop all` and `log <#> [limit] [tools]` end to end, checked
//! against the registry and the outbox.

use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};

use crate::common::{answer_and_announces, chat, get_json, start, WAIT};
use crate::subagents::spawn_call;

/// `/subagents stop 2` stops the child listed second, `stop all` the others, each
/// announcing who stopped it; `log <#> <limit>` shows that many of the last messages and
/// `log <#> tools` only the tool calls and their results. (Catches: `#n` resolved against
/// another order than the list's, `stop all` stopping nothing or counting wrong, the
/// limit ignored, the tools filter inverted.)
#[tokio::test]
async fn stop_by_number_stop_all_and_log_with_limit_and_tools() {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for(
        "start three",
        Step::ToolCalls(vec![
            spawn_call("worker alpha", json!({"label": "alpha"})),
            spawn_call("worker beta", json!({"label": "beta"})),
            spawn_call("worker gamma", json!({"label": "gamma"})),
        ]),
    );
    fake.push_for("start three", Step::text("spawned"));
    // Alpha calls a tool (one it was not offered: its result is an error), then waits.
    fake.push_for(
        "worker alpha",
        Step::ToolCalls(vec![ToolCall::new("rm_rf", "{\"path\": \"/\"}")]),
    );
    fake.push_for("worker alpha", Step::Hang);
    fake.push_for("worker beta", Step::Hang);
    fake.push_for("worker gamma", Step::Hang);
    let mut gw = start(&fake, json!({})).await;
    let mut ws = chat(&gw, "main").await;
    ws.send_text("start three").await.unwrap();
    assert_eq!(ws.next_message(WAIT).await.unwrap(), "spawned");
    // The parent's two calls, alpha's two, beta's and gamma's.
    fake.wait_for_requests(6, WAIT).await.unwrap();

    ws.send_text("/subagents list").await.unwrap();
    let list = ws.next_message(WAIT).await.unwrap();
    let numbered: Vec<(usize, &str)> = ["alpha", "beta", "gamma"]
        .into_iter()
        .map(|label| {
            let line = list
                .lines()
                .find(|l| l.contains(&format!(" · {label} · ")))
                .unwrap_or_else(|| panic!("{label} not listed: {list}"));
            (line.split('.').next().unwrap().parse().unwrap(), label)
        })
        .collect();
    let number = |label: &str| numbered.iter().find(|n| n.1 == label).unwrap().0;
    let second = numbered.iter().find(|n| n.0 == 2).unwrap().1;

    ws.send_text(&format!("/subagents log {} 1", number("alpha")))
        .await
        .unwrap();
    let log = ws.next_message(WAIT).await.unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].ends_with("(alpha), last 1 message(s):"), "{log}");
    assert!(
        lines[1].starts_with("[assistant]") && lines[1].contains("→ rm_rf("),
        "{log}"
    );

    ws.send_text(&format!("/subagents log {} tools", number("alpha")))
        .await
        .unwrap();
    let log = ws.next_message(WAIT).await.unwrap();
    let lines: Vec<&str> = log.lines().skip(1).collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].contains("→ rm_rf({\"path\": \"/\"})"), "{log}");
    assert!(
        lines[1].starts_with("[tool rm_rf] error: unknown tool"),
        "{log}"
    );
    assert!(!log.contains("[user]"), "{log}");

    ws.send_text("/subagents stop 2").await.unwrap();
    let (answer, got) = answer_and_announces(&mut ws, 1).await;
    assert!(
        answer.starts_with("Stopping sub-agent ") && answer.ends_with(&format!("({second}).")),
        "{answer}"
    );
    assert!(
        got[0].contains("Notes: stopped by /subagents stop\n"),
        "{}",
        got[0]
    );

    ws.send_text("/subagents stop all").await.unwrap();
    let (answer, got) = answer_and_announces(&mut ws, 2).await;
    assert_eq!(answer, "Stopped 2 sub-agents.");
    for a in &got {
        assert!(a.contains("Notes: stopped by /subagents stop all\n"), "{a}");
    }
    fake.wait_for_dropped(3, WAIT).await.unwrap();

    let rows = get_json(&gw, "/api/subagents").await["subagents"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(
            (&r["outcome"], &r["announceState"]),
            (&json!("cancelled"), &json!("queued")),
            "{r}"
        );
    }
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
    let announces = crate::record::outbox(&gw)
        .await
        .into_iter()
        .filter(|r| r.key.starts_with("announce:") && r.state == "sent")
        .count();
    assert_eq!(announces, 3);
}
