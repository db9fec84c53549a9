//! Memory after use: 10,000 API turns spread over 100 sessions (100 turns each, the sessions
//! driven side by side), then `--idle-secs` of silence; VmRSS from `/proc/<pid>/status`,
//! split into file-backed and anonymous pages, and the peak. What this catches: caches that
//! never shrink, per-session state that is never dropped, allocator arenas kept after the
//! load is gone.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use serde_json::json;
use switchboard_testkit::fake_model::FakeModel;
use tokio::task::JoinSet;

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, procfs, Api, Settings};

pub const NAME: &str = "sessions-rss";
/// Sessions, each one client task sending its turns one after another.
const SESSIONS: usize = 100;
/// Turns per session: 10,000 in all.
const TURNS_PER_SESSION: usize = 100;
/// Target for resident memory after the turns and the idle time, in MB (10^6 bytes).
const TARGET_MB: f64 = 20.0;

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    let model = FakeModel::start_unchecked().await?;
    let gw = rig::start_gateway(settings, &model, SESSIONS as u32, 8).await?;
    let pid = gw.pid().ok_or_else(|| anyhow!("the gateway has no pid"))?;
    let api = Api::of(&gw)?;
    let at_start = procfs::rss(pid)?;

    eprintln!("  [{NAME}] {SESSIONS} sessions x {TURNS_PER_SESSION} turns");
    let started = Instant::now();
    let mut clients = JoinSet::new();
    for session in 0..SESSIONS {
        let api = api.clone();
        clients.spawn(async move {
            let key = format!("agent:main:bench:rss:{session}");
            for turn in 0..TURNS_PER_SESSION {
                api.turn(&key, &format!("turn {turn} of session {session}"))
                    .await?;
            }
            anyhow::Ok(())
        });
    }
    let mut errors = 0usize;
    let mut first_error = None;
    while let Some(done) = clients.join_next().await {
        if let Err(error) = done.map_err(anyhow::Error::from).and_then(|r| r) {
            errors += 1;
            first_error.get_or_insert_with(|| format!("{error:#}"));
        }
    }
    if let Some(error) = first_error {
        bail!("{errors} of {SESSIONS} sessions failed; first: {error}");
    }
    let turns_secs = started.elapsed().as_secs_f64();
    let after_turns = procfs::rss(pid)?;

    eprintln!("  [{NAME}] idle for {:?}", settings.idle);
    tokio::time::sleep(settings.idle).await;
    let rss = procfs::rss(pid)?;
    let rss_file = procfs::status_kb(pid, "RssFile")?;
    let rss_anon = procfs::status_kb(pid, "RssAnon")?;
    let hwm = procfs::hwm(pid)?;
    let threads = procfs::threads(pid)?;

    let total = SESSIONS * TURNS_PER_SESSION;
    report.figures.push(Figure::with_target(
        NAME,
        format!(
            "VmRSS after {total} turns over {SESSIONS} sessions and {} s idle",
            settings.idle.as_secs()
        ),
        procfs::megabytes(rss),
        "MB",
        Target::AtMost(TARGET_MB),
    ));
    for (figure, bytes) in [
        ("VmRSS right after start", at_start),
        ("VmRSS right after the last turn", after_turns),
        ("of which file-backed (binary, libraries)", rss_file),
        ("of which anonymous (heap, stacks)", rss_anon),
        ("VmHWM (peak)", hwm),
    ] {
        report
            .figures
            .push(Figure::info(NAME, figure, procfs::megabytes(bytes), "MB"));
    }
    report
        .figures
        .push(Figure::info(NAME, "threads", threads as f64, ""));
    report.method = format!(
        "daemon with web chat and SQLite in a fresh state dir; {total} API turns (`wait: true`), \
         {SESSIONS} sessions of {TURNS_PER_SESSION} turns driven side by side, then {} s without \
         traffic; VmRSS read from /proc/<pid>/status (MB = 10^6 bytes)",
        settings.idle.as_secs()
    );
    report
        .notes
        .extend(rig::gateway_notes(&gw, settings, NAME, 10));
    report.details = json!({
        "rssBytes": rss, "rssFileBytes": rss_file, "rssAnonBytes": rss_anon,
        "rssAtStartBytes": at_start, "rssAfterTurnsBytes": after_turns, "hwmBytes": hwm,
        "threads": threads, "turnsSeconds": turns_secs,
        "idleSeconds": Duration::as_secs(&settings.idle),
    });
    Ok(())
}
