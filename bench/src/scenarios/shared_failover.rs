//! Failover of a channel in shared mode (`--postgres` only): two daemons on one database
//! with `storage.processes: "shared"`, both serving, Telegram on the fake Bot API polled by
//! the one holding `channel:telegram`; the holder is SIGKILLed and a Telegram message sent
//! at once; timed from the kill to the other process's answer of that message reaching the
//! fake Telegram. Each round then starts a new process beside the survivor (which now
//! holds the channel), so the processes take turns.

use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, Settings};

pub const NAME: &str = "shared-failover";
/// The daemons' `storage.leaseTimeout`: a takeover cannot come sooner.
const LEASE_SECONDS: u64 = 5;
/// The bound: the lease's expiry plus this.
const TARGET_BEYOND_LEASE_SECONDS: f64 = 2.0;
const ROUNDS: usize = 5;
const TOKEN: &str = "123456:BENCH-token";
/// Longest wait for an answer after a kill: the lease plus a generous start.
const ANSWER_WAIT: Duration = Duration::from_secs(LEASE_SECONDS + 30);
const TELEGRAM_LEASE: &str = "channel:telegram";

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    if settings.postgres.is_none() {
        bail!("the shared-failover scenario needs --postgres (one database, two processes)");
    }
    let model = FakeModel::start_unchecked().await?;
    let tg = FakeTelegram::start(TOKEN).await?;
    let storage = rig::storage_url(settings)
        .await?
        .context("no database for the shared-failover scenario")?;
    let config = config(settings, &model, &tg, &storage)?;
    let start = |config: String| GatewayBuilder::new(&settings.bin).config(config).start();

    let mut holder = start(config.clone()).await?;
    wait_holding(&holder).await?;
    let mut failovers = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let other = start(config.clone()).await?;
        if holds(&other).await? {
            bail!("round {round}: the new process holds the channel beside its holder");
        }
        let answered_before = tg.sent_messages().len();
        holder.kill().await?;
        let killed = Instant::now();
        tg.user_message(Chat::private(42), user(), &format!("ping {round}"));
        tg.wait_for_sent(answered_before + 1, ANSWER_WAIT)
            .await
            .with_context(|| format!("round {round}: no answer after the kill"))?;
        failovers.push(killed.elapsed().as_secs_f64());
        holder = other;
        wait_holding(&holder).await?;
        eprintln!("  [{NAME}] round {}: {:.2} s", round + 1, failovers[round]);
    }
    let _ = holder.terminate().await;

    let worst = failovers.iter().copied().fold(0.0, f64::max);
    let mut sorted = failovers.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let bound = LEASE_SECONDS as f64 + TARGET_BEYOND_LEASE_SECONDS;
    report.figures.push(Figure::with_target(
        NAME,
        format!("SIGKILL of the Telegram holder -> answer by the other process, median (leaseTimeout {LEASE_SECONDS}s)"),
        median,
        "s",
        Target::AtMost(bound),
    ));
    report.figures.push(Figure::with_target(
        NAME,
        "SIGKILL of the Telegram holder -> answer by the other process, worst",
        worst,
        "s",
        Target::AtMost(bound),
    ));
    report.method = format!(
        "two daemons in shared mode on one PostgreSQL database, Telegram on the fake Bot API \
         (long polling, 1 s poll timeout), storage.leaseTimeout {LEASE_SECONDS}s; {ROUNDS} \
         rounds, each: a second process started and seen not holding channel:telegram, the \
         holder SIGKILLed, a Telegram message sent at once, timed until its answer reaches \
         the fake Telegram; target: leaseTimeout + {TARGET_BEYOND_LEASE_SECONDS} s"
    );
    report.details = json!({ "failoverSeconds": failovers });
    Ok(())
}

/// `gw`'s `/api/status`.
async fn status(gw: &Gateway) -> anyhow::Result<Value> {
    Ok(gw
        .http()
        .get(format!("{}/api/status", gw.base_url()))
        .send()
        .await?
        .json()
        .await?)
}

/// Whether `gw` holds `channel:telegram` (its `/api/status`).
async fn holds(gw: &Gateway) -> anyhow::Result<bool> {
    let status = status(gw).await?;
    Ok(status["leases"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|l| l["name"] == TELEGRAM_LEASE && l["mine"] == true))
}

/// Waits (bounded) until `gw` holds `channel:telegram`.
async fn wait_holding(gw: &Gateway) -> anyhow::Result<()> {
    let deadline = Instant::now() + ANSWER_WAIT;
    while !holds(gw).await? {
        if Instant::now() > deadline {
            bail!(
                "the process never took channel:telegram: {}",
                status(gw).await?
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// The bench's daemon config in shared mode with Telegram on `tg` and the database `storage`.
fn config(
    settings: &Settings,
    model: &FakeModel,
    tg: &FakeTelegram,
    storage: &str,
) -> anyhow::Result<String> {
    let base = rig::config(
        &model.base_url(),
        0,
        64,
        8,
        &settings.mcp_servers,
        Some(storage),
    );
    let mut config: Value = serde_json::from_str(&base)?;
    config["storage"]["leaseTimeout"] = json!(format!("{LEASE_SECONDS}s"));
    config["storage"]["processes"] = json!("shared");
    config["channels"] = json!({ "telegram": {
        "enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
        "allowFrom": ["42"], "pollTimeoutSeconds": 1,
    } });
    Ok(config.to_string())
}

fn user() -> User {
    User::new(42, "ann", "Ann")
}
