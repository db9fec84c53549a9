//! `task` overhead: one parent turn whose first model answer is one `task` call; timed on the
//! operators' event stream from the parent's `run.step` 1 (just before its first model call)
//! to its `run.step` 2 (just before the call that carries the task's result), minus the
//! model's time for the two model calls on that path (the parent's first call and the
//! child's one call). What is left is what the `task` tool adds: creating the child, its
//! lane start and end, finding its answer, storing the result.

use std::time::Duration;

use anyhow::{anyhow, Context as _};
use serde_json::json;
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::WsClient;

use super::events::next_event;
use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, Api, Settings};
use crate::stats::Percentiles;

pub const NAME: &str = "task-overhead";
/// Target for the `task` tool beyond the model's time, in ms (p99).
const TARGET_MS: f64 = 10.0;
/// Bound of one sample.
const SAMPLE_LIMIT: Duration = Duration::from_secs(30);
/// Start of a child's task, which tells the child's requests from the parent's.
const CHILD: &str = "child task ";

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let model = FakeModel::start_unchecked().await?;
    let gw = rig::start_gateway(settings, &model, 64, 8).await?;
    let api = Api::of(&gw)?;
    let mut ws = WsClient::connect(&gw.events_url()).await?;

    let warmup = rig::warmup_samples(settings);
    let (recorded_before, samples) = rig::sampled(
        NAME,
        settings,
        &gw,
        &model,
        &mut report.notes,
        async |tag| sample(&model, &api, &mut ws, &tag).await,
    )
    .await?;

    let (mut parent_first, mut child) = (Vec::new(), Vec::new());
    for request in model.requests().into_iter().skip(recorded_before) {
        let text = rig::last_user_text(&request.body);
        let has_tool_result = request.body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        if text.starts_with(CHILD) {
            child.push(request.body);
        } else if !has_tool_result {
            parent_first.push(request.body);
        }
    }
    eprintln!("  [{NAME}] model time: replaying parent and child requests");
    let parent_model =
        Percentiles::of(&rig::model_time(&model, &parent_first, settings.samples).await?)
            .ok_or_else(|| anyhow!("no parent model samples"))?;
    let child_model = Percentiles::of(&rig::model_time(&model, &child, settings.samples).await?)
        .ok_or_else(|| anyhow!("no child model samples"))?;
    let model_ms = parent_model.p50 + child_model.p50;
    let raw = Percentiles::of(&samples).ok_or_else(|| anyhow!("no samples"))?;
    let beyond = raw.minus(model_ms);
    report.figures.extend(Figure::percentiles(
        NAME,
        "task tool, beyond model time",
        &beyond,
        Some(Target::AtMost(TARGET_MS)),
    ));
    report.figures.push(Figure::info(
        NAME,
        "step 1 -> step 2 p50 (raw)",
        raw.p50,
        "ms",
    ));
    report.figures.push(Figure::info(
        NAME,
        "model time p50: parent call + child call",
        model_ms,
        "ms",
    ));
    report.method = format!(
        "{warmup} warm-up and {} measured samples, one after another, each a new parent session whose first model \
         answer is one task call; timed from the parent's run.step 1 event to its run.step 2 event on the operators' \
         event stream (/api/events), minus the p50 model time of the parent's first call and the child's call, \
         measured by replaying the daemon's own recorded requests straight to the fake model ({} samples each)",
        settings.samples, settings.samples
    );
    report
        .notes
        .extend(rig::gateway_notes(&gw, settings, NAME, 10));
    report.details = json!({"rawMs": raw, "beyondModelMs": beyond,
        "parentModelMs": parent_model, "childModelMs": child_model});
    Ok(())
}

/// One parent turn with one `task` call: the time from its step 1 to its step 2.
async fn sample(
    model: &FakeModel,
    api: &Api,
    ws: &mut WsClient,
    id: &str,
) -> anyhow::Result<Duration> {
    let trigger = format!("[task-{id}]");
    model.push_for(
        &trigger,
        Step::ToolCalls(vec![ToolCall::new(
            "task",
            json!({"description": "bench", "prompt": format!("{CHILD}{id}")}).to_string(),
        )]),
    );
    model.push_for(&trigger, Step::Text("ok".into()));
    let key = format!("agent:main:bench:task:{id}");
    let deadline = tokio::time::Instant::now() + SAMPLE_LIMIT;
    let parent = {
        let (api, key, text) = (api.clone(), key.clone(), format!("{trigger} run one task"));
        tokio::spawn(async move { api.turn(&key, &text).await })
    };
    // One sample at a time: the first step 1 is the parent's; its step 2 follows the task.
    let (first, at1) = next_event(ws, deadline, "the parent's step 1", |e| {
        e["type"] == "run.step" && e["step"] == 1
    })
    .await?;
    let parent_run = first["runId"].clone();
    let (_, at2) = next_event(ws, deadline, "the parent's step 2", |e| {
        e["type"] == "run.step" && e["step"] == 2 && e["runId"] == parent_run
    })
    .await?;
    tokio::time::timeout_at(deadline, parent)
        .await
        .context("the parent turn did not end")???;
    Ok(at2 - at1)
}
