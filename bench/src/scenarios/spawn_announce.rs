//! Spawn → announce: one parent turn spawns one child; timed from the `subagent.spawned`
//! event to the `outbox.sent` event of its `announce:<runId>`, both read from the same web
//! chat socket, minus the model's time for the two model calls on that path.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Context as _};
use serde_json::{json, Value};
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::harness::WsClient;

use super::events::next_event;
use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, Api, Settings};
use crate::stats::Percentiles;

const NAME: &str = "spawn-announce";
/// Target for spawn → announce beyond the model's time, in ms.
const TARGET_MS: f64 = 10.0;
/// Bound of one sample.
const SAMPLE_LIMIT: Duration = Duration::from_secs(30);
/// Start of the announce step's user message, which tells announce requests from the child's.
const ANNOUNCE_PROMPT: &str = "Your task has ended";

/// Times of one sample, from the parent's POST.
struct Sample {
    spawned: Duration,
    /// `None` if the `subagent.announced` event came after the delivery.
    announced_event: Option<Duration>,
    sent: Duration,
}

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

    // Model time of the two calls on the path: the child's turn and the announce step,
    // replayed from the daemon's own recorded requests.
    let (mut child_bodies, mut announce_bodies) = (Vec::new(), Vec::new());
    for request in model.requests().into_iter().skip(recorded_before) {
        let text = rig::last_user_text(&request.body);
        if text.contains("[spawn-") {
            continue; // the parent's own calls
        }
        if text.starts_with(ANNOUNCE_PROMPT) {
            announce_bodies.push(request.body);
        } else {
            child_bodies.push(request.body);
        }
    }
    eprintln!("  [spawn-announce] model time: replaying child and announce requests");
    let child_model =
        Percentiles::of(&rig::model_time(&model, &child_bodies, settings.samples).await?)
            .ok_or_else(|| anyhow!("no child model samples"))?;
    let announce_model =
        Percentiles::of(&rig::model_time(&model, &announce_bodies, settings.samples).await?)
            .ok_or_else(|| anyhow!("no announce model samples"))?;
    let model_ms = child_model.p50 + announce_model.p50;

    let spawn_to_sent: Vec<Duration> = samples
        .iter()
        .map(|s| s.sent.saturating_sub(s.spawned))
        .collect();
    let spawn_to_announced: Vec<Duration> = samples
        .iter()
        .filter_map(|s| Some(s.announced_event?.saturating_sub(s.spawned)))
        .collect();
    let post_to_spawned: Vec<Duration> = samples.iter().map(|s| s.spawned).collect();
    let raw = Percentiles::of(&spawn_to_sent).ok_or_else(|| anyhow!("no samples"))?;
    let beyond = raw.minus(model_ms);
    let announced = Percentiles::of(&spawn_to_announced);
    let to_spawned = Percentiles::of(&post_to_spawned);

    report.figures.extend(Figure::percentiles(
        NAME,
        "spawn -> announce sent, beyond model time",
        &beyond,
        Some(Target::AtMost(TARGET_MS)),
    ));
    report.figures.push(Figure::info(
        NAME,
        "spawn -> announce sent p50 (raw)",
        raw.p50,
        "ms",
    ));
    report.figures.push(Figure::info(
        NAME,
        "model time p50: child + announce step",
        model_ms,
        "ms",
    ));
    if let Some(announced) = &announced {
        report.figures.push(Figure::info(
            NAME,
            "spawn -> subagent.announced p50 (raw)",
            announced.p50,
            "ms",
        ));
    }
    if let Some(to_spawned) = &to_spawned {
        report.figures.push(Figure::info(
            NAME,
            "POST -> subagent.spawned p50 (raw)",
            to_spawned.p50,
            "ms",
        ));
    }
    report.method = format!(
        "{warmup} warm-up and {} measured samples, one after another, each a new parent session whose first model \
         answer is one sessions_spawn call; timed from the subagent.spawned event to the outbox.sent event of \
         announce:<runId>, both read on the operators' event stream (/api/events), minus the p50 model time of the two model calls \
         on that path (the child's turn and the announce step), measured by replaying the daemon's own recorded \
         child and announce requests straight to the fake model ({} samples each); the parent's second model call \
         runs concurrently and is not subtracted",
        settings.samples, settings.samples
    );
    report
        .notes
        .extend(rig::gateway_notes(&gw, settings, NAME, 10));
    report.details = json!({
        "spawnToSentMs": raw, "beyondModelMs": beyond, "spawnToAnnouncedEventMs": announced,
        "postToSpawnedMs": to_spawned, "childModelMs": child_model, "announceModelMs": announce_model,
    });
    Ok(())
}

/// One parent turn that spawns one child; waits for the announce's delivery and the parent's
/// end, so samples do not overlap.
async fn sample(
    model: &FakeModel,
    api: &Api,
    ws: &mut WsClient,
    id: &str,
) -> anyhow::Result<Sample> {
    let trigger = format!("[spawn-{id}]");
    model.push_for(
        &trigger,
        Step::ToolCalls(vec![ToolCall::new(
            "sessions_spawn",
            format!("{{\"task\":\"child {id}\"}}"),
        )]),
    );
    model.push_for(&trigger, Step::Text("ok".into()));
    let key = format!("agent:main:bench:spawn:{id}");
    let deadline = tokio::time::Instant::now() + SAMPLE_LIMIT;

    let posted = Instant::now();
    let parent = {
        let (api, key, text) = (
            api.clone(),
            key.clone(),
            format!("{trigger} spawn one child"),
        );
        tokio::spawn(async move { api.turn(&key, &text).await })
    };
    // Events before the spawn are kept: one of the announce's among them means the daemon
    // published the child's events before its spawn.
    let mut before_spawn = Vec::new();
    let (spawned, spawned_at) = next_event(ws, deadline, "subagent.spawned", |e| {
        let wanted = e["type"] == "subagent.spawned" && e["requester"] == key.as_str();
        if !wanted {
            before_spawn.push(e.clone());
        }
        wanted
    })
    .await?;
    let run_id = spawned["runId"]
        .as_str()
        .ok_or_else(|| anyhow!("subagent.spawned without runId: {spawned}"))?
        .to_owned();
    let announce_key = format!("announce:{run_id}");
    // Either order: the announce's outbox row may be sent before its event is emitted.
    let (mut announced_at, mut sent_at) = (None, None);
    while sent_at.is_none() {
        let is_announce = |e: &Value| {
            (e["type"] == "subagent.announced" && e["runId"] == run_id.as_str())
                || (e["type"] == "outbox.sent" && e["key"] == announce_key.as_str())
        };
        let (event, at) = match next_event(ws, deadline, "the announce's events", is_announce).await
        {
            Ok(found) => found,
            Err(error) => {
                let early: Vec<&Value> = before_spawn.iter().filter(|e| is_announce(e)).collect();
                if early.is_empty() {
                    return Err(error);
                }
                return Err(error.context(format!(
                    "the daemon published the announce's events before subagent.spawned: {early:?}"
                )));
            }
        };
        if event["type"] == "outbox.sent" {
            sent_at = Some(at);
        } else {
            announced_at = Some(at);
        }
    }
    let sent_at = sent_at.ok_or_else(|| anyhow!("no outbox.sent"))?;
    tokio::time::timeout_at(deadline, parent)
        .await
        .context("the parent turn did not end")???;
    Ok(Sample {
        spawned: spawned_at - posted,
        announced_event: announced_at.map(|at| at - posted),
        sent: sent_at - posted,
    })
}
