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
