//! Idle footprint: the daemon with its web chat and SQLite store, after one web chat turn
//! and one API turn, left alone; then VmRSS from `/proc/<pid>/status`.

use std::time::Duration;

use anyhow::anyhow;
use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::WsClient;

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, procfs, Api, Settings};

const NAME: &str = "idle-rss";
/// Target for resident memory at idle, in MB (10^6 bytes).
const TARGET_MB: f64 = 15.0;
const REPLY_WAIT: Duration = Duration::from_secs(30);

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let model = FakeModel::start_unchecked().await?;
    let gw = rig::start_gateway(settings, &model, 64, 8).await?;
    let pid = gw.pid().ok_or_else(|| anyhow!("the gateway has no pid"))?;
    let at_start = procfs::rss(pid)?;

    // One turn through the web chat socket (kept open while idle) and one through the API.
    let mut ws = WsClient::connect(&gw.ws_url("bench")).await?;
    ws.send_text("hello from the bench").await?;
    let reply = ws.next_message(REPLY_WAIT).await?;
    Api::of(&gw)?.turn("agent:main:bench:idle", "hello").await?;

    eprintln!("  [idle-rss] idle for {:?}", settings.idle);
    let mut ws_frames = 0;
    let idle_until = tokio::time::Instant::now() + settings.idle;
    // Keep reading the socket (as a browser would) so the daemon never sees a stuck reader.
    while let Ok(Ok(_)) = tokio::time::timeout_at(idle_until, ws.next_frame(settings.idle)).await {
        ws_frames += 1;
    }
    // A socket error ends the reads early; the idle period still runs out.
    tokio::time::sleep_until(idle_until).await;
    let rss = procfs::rss(pid)?;
    let hwm = procfs::hwm(pid)?;
    // What the resident memory is: file-backed pages (the binary's text and data, shared
    // libraries) against anonymous ones (heap, thread stacks).
    let rss_file = procfs::status_kb(pid, "RssFile")?;
    let rss_anon = procfs::status_kb(pid, "RssAnon")?;
    let threads = procfs::threads(pid)?;
    let cpu = procfs::cpu_seconds(Some(pid))?;

    report.figures.push(Figure::with_target(
        NAME,
        format!("VmRSS after {} s idle", settings.idle.as_secs()),
        procfs::megabytes(rss),
        "MB",
        Target::AtMost(TARGET_MB),
    ));
    report.figures.push(Figure::info(
        NAME,
        "VmRSS right after start",
        procfs::megabytes(at_start),
        "MB",
    ));
    report.figures.push(Figure::info(
        NAME,
        "of which file-backed (binary, libraries)",
        procfs::megabytes(rss_file),
        "MB",
    ));
    report.figures.push(Figure::info(
        NAME,
        "of which anonymous (heap, stacks)",
        procfs::megabytes(rss_anon),
        "MB",
    ));
    report.figures.push(Figure::info(
        NAME,
        "VmHWM (peak so far)",
        procfs::megabytes(hwm),
        "MB",
    ));
    report
        .figures
        .push(Figure::info(NAME, "threads", threads as f64, ""));
    report.method = format!(
        "daemon with web chat and SQLite in a fresh state dir; one web chat turn (socket kept open) and one \
         API turn, then {} s without traffic; VmRSS read from /proc/<pid>/status (MB = 10^6 bytes)",
        settings.idle.as_secs()
    );
    report
        .notes
        .extend(rig::gateway_notes(&gw, settings, NAME, 10));
    report.details = json!({
        "rssBytes": rss, "rssFileBytes": rss_file, "rssAnonBytes": rss_anon, "rssAtStartBytes": at_start, "hwmBytes": hwm, "threads": threads,
        "cpuSecondsTotal": cpu, "wsFramesWhileIdle": ws_frames, "webchatReply": reply,
    });
    Ok(())
}
