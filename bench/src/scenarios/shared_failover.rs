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
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};

use super::failover::{
    config, figures, user, ANSWER_WAIT, LEASE_SECONDS, ROUNDS, TARGET_BEYOND_LEASE_SECONDS, TOKEN,
};
use crate::report::ScenarioReport;
use crate::rig::{self, Settings};

pub const NAME: &str = "shared-failover";
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
    let mut config = config(settings, &model, &tg, &storage)?;
    config["storage"]["processes"] = json!("shared");
    let config = config.to_string();
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

    figures(
        report,
        NAME,
        "SIGKILL of the Telegram holder -> answer by the other process",
        &failovers,
    );
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
