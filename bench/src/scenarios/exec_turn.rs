//! A turn with one `exec` of `echo hi`, as a user's chat makes it: the model's first answer
//! is the tool call, its second the reply. Timed through the HTTP API (`wait: true`) from
//! the message to the answer, minus the model's own time for the two calls. What is left is
//! everything the daemon adds: the turn's own overhead, the approval gate, the command's
//! process (and, with the sandbox, bubblewrap's namespaces), the tool call's record and the
//! second request. Run twice: with `sandbox.mode: "off"` and with bubblewrap (skipped, with
//! a note, where bubblewrap cannot run).

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context as _};
use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, Api, Settings};
use crate::stats::Percentiles;

pub const NAME: &str = "exec-turn";
/// The command every turn runs.
const COMMAND: &str = "echo hi";
/// Beyond the model's time, in ms (p50): without the sandbox, and with it.
const TARGET_OFF_MS: f64 = 2.0;
const TARGET_ON_MS: f64 = 5.0;

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let mut details = serde_json::Map::new();
    for (mode, target) in [("off", TARGET_OFF_MS), ("on", TARGET_ON_MS)] {
        if mode == "on" && !bwrap_works() {
            report.notes.push(
                "bubblewrap cannot run here (`bwrap --unshare-all --ro-bind / / true` failed): \
                 the sandboxed run was skipped"
                    .into(),
            );
            continue;
        }
        let (beyond, raw, model_ms) = one_mode(settings, mode, report).await?;
        report.figures.push(Figure::with_target(
            NAME,
            format!("sandbox {mode}: beyond model time p50"),
            beyond.p50,
            "ms",
            Target::AtMost(target),
        ));
        report.figures.push(Figure::info(
            NAME,
            format!("sandbox {mode}: beyond model time p99"),
            beyond.p99,
            "ms",
        ));
        details.insert(
            mode.to_owned(),
            json!({ "rawMs": raw, "beyondModelMs": beyond, "modelMs": model_ms }),
        );
    }
    report.method = format!(
        "per sandbox mode, a daemon of its own; {} warm-up and {} measured turns, one after another, each in \
         a new session, via POST /api/sessions/{{key}}/messages (wait:true): the model's first answer is one \
         exec of `{COMMAND}`, its second the reply; beyond model time = turn latency minus the p50 of the \
         model's time for the turn's two calls, measured by replaying the daemon's own recorded requests \
         straight to the fake model",
        rig::warmup_samples(settings),
        settings.samples
    );
    report.details = Value::Object(details);
    Ok(())
}

/// The daemon with `sandbox.mode` set to `mode`: (beyond model time, raw latency, model
/// time in ms).
async fn one_mode(
    settings: &Settings,
    mode: &str,
    report: &mut ScenarioReport,
) -> anyhow::Result<(Percentiles, Percentiles, f64)> {
    let sandbox = match mode {
        "off" => json!({ "mode": "off" }),
        _ => json!({ "mode": "all" }),
    };
    let settings = Settings {
        config_merge: Some(rig::merged(
            settings.config_merge.clone(),
            json!({ "agents": { "defaults": { "sandbox": sandbox } } }),
        )),
        ..settings.clone()
    };
    let label = format!("{NAME} (sandbox {mode})");
    let model = FakeModel::start_unchecked().await?;
    let gw = rig::start_gateway(&settings, &model, 64, 8).await?;
    let api = Api::of(&gw)?;
    let (recorded_before, samples) = rig::sampled(
        &label,
        &settings,
        &gw,
        &model,
        &mut report.notes,
        async |tag| sample(&model, &api, &format!("{mode}-{tag}")).await,
    )
    .await?;

    let (mut first, mut second) = (Vec::new(), Vec::new());
    for request in model.requests().into_iter().skip(recorded_before) {
        match tool_result(&request.body) {
            None => first.push(request.body),
            Some(result) if result.contains("hi") => second.push(request.body),
            Some(result) => bail!("the command did not run: its tool result was {result}"),
        }
    }
    eprintln!("  [{label}] model time: replaying both calls");
    let first_ms = Percentiles::of(&rig::model_time(&model, &first, settings.samples).await?)
        .ok_or_else(|| anyhow!("no first-call model samples"))?;
    let second_ms = Percentiles::of(&rig::model_time(&model, &second, settings.samples).await?)
        .ok_or_else(|| anyhow!("no second-call model samples"))?;
    let model_ms = first_ms.p50 + second_ms.p50;
    let raw = Percentiles::of(&samples).ok_or_else(|| anyhow!("no samples"))?;
    report
        .notes
        .extend(rig::gateway_notes(&gw, &settings, &label, 10));
    Ok((raw.minus(model_ms), raw, model_ms))
}

/// One turn of one `exec` in a new session: its latency.
async fn sample(model: &FakeModel, api: &Api, id: &str) -> anyhow::Result<Duration> {
    let trigger = format!("[exec-{id}]");
    model.push_for(
        &trigger,
        Step::ToolCalls(vec![ToolCall::new(
            "exec",
            json!({ "command": COMMAND }).to_string(),
        )]),
    );
    model.push_for(&trigger, Step::Text("done".into()));
    let key = format!("agent:main:bench:exec:{id}");
    let started = Instant::now();
    api.turn(&key, &format!("{trigger} say hi"))
        .await
        .with_context(|| format!("exec turn {id}"))?;
    Ok(started.elapsed())
}

/// The text of the request's tool result, if it carries one (the turn's second call).
fn tool_result(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    let tool = messages.iter().rev().find(|m| m["role"] == "tool")?;
    Some(match &tool["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    })
}

/// Whether bubblewrap can make a sandbox on this host (the daemon's own probe).
fn bwrap_works() -> bool {
    std::process::Command::new("bwrap")
        .args(["--unshare-all", "--ro-bind", "/", "/", "true"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
