//! Knowing the cost end to end: `/usage` and `/status` after a few turns with a priced
//! model, the model series of `/metrics`, and the daily budget that refuses new runs
//! (no model call) and still does after a restart.

use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::WsClient;

use crate::common::{chat, get_text, start, WAIT};

/// The fake model priced at `input`/`output` USD per million tokens, with a window.
fn priced(input: f64, output: f64, extra: Value) -> Value {
    let mut cfg = json!({"models": {"providers": {"fake": {"models": [
        {"id": "scripted", "contextWindow": 200000, "cost": {"input": input, "output": output}}
    ]}}}});
    crate::common::merge(&mut cfg, &extra);
    cfg
}

/// The number after `label` in `text` (thousands separators dropped).
fn number_after(text: &str, label: &str) -> f64 {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {text}"))
        + label.len();
    let digits: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    digits
        .trim_end_matches('.')
        .parse()
        .unwrap_or_else(|e| panic!("{label}: {e} in {text}"))
}

async fn say(ws: &mut WsClient, text: &str) -> String {
    ws.send_text(text).await.unwrap();
    ws.next_message(WAIT).await.unwrap()
}

/// Catches: `/usage` missing this session's tokens, cost or context fill or the day's
/// totals, `/status` without the context fill and today's cost, and `/metrics` without
/// the model's token and cost counters or its latency histogram (or counting other calls).
#[tokio::test]
async fn usage_status_and_metrics_after_a_few_turns() {
    let fake = FakeModel::start().await.unwrap();
    let gw = start(&fake, priced(1000.0, 2000.0, json!({}))).await;
    let mut ws = chat(&gw, "main").await;
    assert_eq!(say(&mut ws, "first question").await, "echo: first question");
    assert_eq!(
        say(&mut ws, "second question").await,
        "echo: second question"
    );

    let usage = say(&mut ws, "/usage").await;
    let input = number_after(&usage, "Session: ");
    let output = number_after(&usage, " in / ");
    assert!(input > 0.0 && output > 0.0, "{usage}");
    let cost = (input * 1000.0 + output * 2000.0) / 1e6;
    let usd = dollars(cost);
    assert!(
        usage.starts_with(&format!(
            "Session: {} in / {} out tokens, {usd} (2 runs)\nCost: {usd}\nContext: ",
            count(input),
            count(output)
        )),
        "{usage}"
    );
    let context = number_after(&usage, "Context: ");
    assert!(context > 0.0 && context < input, "{usage}");
    assert!(
        usage.contains(&format!("{} of 200,000 tokens (0%)", count(context))),
        "{usage}"
    );
    assert!(
        usage.ends_with(&format!(
            "\nToday (UTC), agent main: {} in / {} out tokens, {usd} (2 runs)",
            count(input),
            count(output)
        )),
        "{usage}"
    );

    let status = say(&mut ws, "/status").await;
    assert!(status.contains("Model: fake/scripted"), "{status}");
    assert!(
        status.contains(&format!(
            "\nContext: {} of 200,000 tokens (0%)\nToday's cost: {usd}",
            count(context)
        )),
        "{status}"
    );

    let metrics = get_text(&gw, "/metrics").await;
    for line in [
        format!("switchboard_model_tokens_total{{model=\"fake/scripted\",direction=\"input\"}} {input}"),
        format!("switchboard_model_tokens_total{{model=\"fake/scripted\",direction=\"output\"}} {output}"),
        "switchboard_model_call_seconds_count{model=\"fake/scripted\"} 2".to_string(),
        "switchboard_model_call_seconds_bucket{model=\"fake/scripted\",le=\"+Inf\"} 2".to_string(),
        "# TYPE switchboard_model_call_seconds histogram".to_string(),
        "# TYPE switchboard_model_tokens_total counter".to_string(),
        "# TYPE switchboard_model_cost_usd_total counter".to_string(),
    ] {
        assert!(metrics.lines().any(|l| l == line), "missing {line}");
    }
    let cost_line = metrics
        .lines()
        .find(|l| l.starts_with("switchboard_model_cost_usd_total{model=\"fake/scripted\"} "))
        .unwrap();
    let counted: f64 = cost_line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((counted - cost).abs() < 1e-9, "{cost_line} vs {cost}");
    assert!(metrics.contains("# HELP switchboard_model_call_seconds "));
}

/// Catches: a spent budget still calling the model, a refused run without a word to the
/// chat, and a budget forgotten by a restart (it is counted from the stored runs).
#[tokio::test]
async fn a_spent_daily_budget_refuses_new_runs_even_after_a_restart() {
    let fake = FakeModel::start().await.unwrap();
    // $1 a token in: the first turn alone spends the $5 budget.
    let mut gw = start(
        &fake,
        priced(
            1_000_000.0,
            0.0,
            json!({"agents": {"defaults": {"budget": {"dailyUsd": 5}}}}),
        ),
    )
    .await;
    let mut ws = chat(&gw, "main").await;
    assert_eq!(say(&mut ws, "spend it").await, "echo: spend it");
    assert_eq!(fake.request_count(), 1);
    let refused = say(&mut ws, "one more").await;
    assert!(
        refused.starts_with("⚠️ Today's budget is spent: $")
            && refused.ends_with(
                " of $5.00 (agents.defaults.budget.dailyUsd). No new runs until 00:00 UTC."
            ),
        "{refused}"
    );
    assert_eq!(fake.request_count(), 1, "no model call for a refused run");
    let usage = say(&mut ws, "/usage").await;
    assert!(
        usage.contains("\nBudget today (all agents): $") && usage.ends_with(" of $5.00"),
        "{usage}"
    );

    gw.terminate().await.unwrap();
    gw.restart().await.unwrap();
    let mut ws = chat(&gw, "main").await;
    assert_eq!(say(&mut ws, "after the restart").await, refused);
    assert_eq!(
        fake.request_count(),
        1,
        "still no model call after a restart"
    );
}

/// `n` (a whole number) with thousands separated, as the answers write it.
fn count(n: f64) -> String {
    let digits = format!("{n:.0}");
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A cost as the answers write it.
fn dollars(c: f64) -> String {
    if c >= 0.01 {
        format!("${c:.2}")
    } else {
        format!("${c:.4}")
    }
}

/// Catches: a turn a fallback served during an outage charged at the primary's price (in
/// `/usage`, its per-model line and the daily budget), or recorded under the primary.
#[tokio::test]
async fn a_fallback_that_serves_is_charged_at_its_own_price() {
    use switchboard_testkit::fake_model::{DefaultReply, Step};
    let primary = FakeModel::start().await.unwrap();
    let backup = FakeModel::start().await.unwrap();
    backup.set_default(DefaultReply::Text("from the backup".into()));
    primary.push(Step::Status {
        code: 503,
        retry_after: None,
        body: r#"{"error": {"message": "overloaded"}}"#.into(),
    });
    // The primary is all but free; the backup costs $1 a token in: one turn it serves
    // spends the $5 budget, one the primary served would not.
    let mut cfg: Value = serde_json::from_str(&crate::common::config_for(
        &primary,
        json!({
            "models": {"providers": {
                "main": {"api": "openai-chat", "baseUrl": primary.base_url(), "apiKey": "k1",
                    "maxRetries": 0, "models": [{"id": "m1", "cost": {"input": 0.001, "output": 0.001}}]},
                "backup": {"api": "openai-chat", "baseUrl": backup.base_url(), "apiKey": "k2",
                    "maxRetries": 0, "models": [{"id": "m2", "cost": {"input": 1_000_000.0, "output": 0.0}}]},
            }},
            "agents": {"defaults": {
                "model": {"primary": "main/m1", "fallbacks": ["backup/m2"]},
                "budget": {"dailyUsd": 5}
            }},
        }),
    ))
    .unwrap();
    cfg["models"]["providers"]
        .as_object_mut()
        .unwrap()
        .remove("fake");
    let gw = switchboard_testkit::harness::GatewayBuilder::new(crate::common::BIN)
        .config(cfg.to_string())
        .start()
        .await
        .unwrap();
    let mut ws = chat(&gw, "main").await;
    ws.send_text("during the outage").await.unwrap();
    let mut got = vec![
        ws.next_message(WAIT).await.unwrap(),
        ws.next_message(WAIT).await.unwrap(),
    ];
    got.sort();
    assert_eq!(
        got,
        vec![
            "from the backup".to_string(),
            "main/m1 is failing (HTTP 503); answering with backup/m2 until it recovers."
                .to_string()
        ]
    );
    let usage = say(&mut ws, "/usage").await;
    let input = number_after(&usage, "Session: ");
    assert!(input >= 5.0, "{usage}");
    let usd = dollars(input);
    assert!(
        usage.contains(&format!("\nCost: {usd}\n")),
        "charged at the backup's price: {usage}"
    );
    assert!(
        usage.contains(&format!("\nModels: backup/m2 {usd} (1 run)\n")),
        "{usage}"
    );
    assert!(
        usage.contains(&format!("\nBudget today (all agents): {usd} of $5.00")),
        "{usage}"
    );
    // The budget counted the backup's price: the next turn is refused without a call.
    let refused = say(&mut ws, "one more").await;
    assert!(
        refused.starts_with(&format!("⚠️ Today's budget is spent: {usd} of $5.00")),
        "{refused}"
    );
    assert_eq!((primary.request_count(), backup.request_count()), (1, 1));
    primary.assert_no_violations();
    backup.assert_no_violations();
}
