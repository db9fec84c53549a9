//! Failover on PostgreSQL (`--postgres` only): two daemons on one database with Telegram
//! on the fake Bot API, one active and one standing by; the active one is SIGKILLed and a
//! Telegram message sent at once; timed from the kill to the standby's answer of that
//! message reaching the fake Telegram. Each round then launches a new standby, so the
//! processes take turns.

use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use serde_json::{json, Value};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};
use switchboard_testkit::harness::GatewayBuilder;

use crate::report::{Figure, ScenarioReport, Target};
use crate::rig::{self, Settings};

pub const NAME: &str = "failover";
/// The daemons' `storage.leaseTimeout`: a takeover cannot come sooner.
pub(super) const LEASE_SECONDS: u64 = 5;
/// The bound: the lease's expiry plus this.
pub(super) const TARGET_BEYOND_LEASE_SECONDS: f64 = 2.0;
pub(super) const ROUNDS: usize = 5;
pub(super) const TOKEN: &str = "123456:BENCH-token";
/// Longest wait for an answer after a kill: the lease plus a generous start.
pub(super) const ANSWER_WAIT: Duration = Duration::from_secs(LEASE_SECONDS + 30);

pub async fn run(settings: &Settings, report: &mut ScenarioReport) -> anyhow::Result<()> {
    if settings.postgres.is_none() {
        bail!("the failover scenario needs --postgres (one database, two processes)");
    }
    let model = FakeModel::start_unchecked().await?;
    let tg = FakeTelegram::start(TOKEN).await?;
    let storage = rig::storage_url(settings)
        .await?
        .context("no database for the failover scenario")?;
    let config = config(settings, &model, &tg, &storage)?.to_string();
    let start = |config: String| GatewayBuilder::new(&settings.bin).config(config);

    let mut active = start(config.clone()).start().await?;
    let mut failovers = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS {
        let mut standby = start(config.clone()).launch().await?;
        standby
            .wait_for_log("standing by: ", ANSWER_WAIT)
            .await
            .context("the second process did not stand by")?;
        let answered_before = tg.sent_messages().len();
        active.kill().await?;
        let killed = Instant::now();
        tg.user_message(Chat::private(42), user(), &format!("ping {round}"));
        tg.wait_for_sent(answered_before + 1, ANSWER_WAIT)
            .await
            .with_context(|| format!("round {round}: no answer after the kill"))?;
        failovers.push(killed.elapsed().as_secs_f64());
        standby.wait_ready().await?;
        active = standby;
        eprintln!("  [{NAME}] round {}: {:.2} s", round + 1, failovers[round]);
    }
    let _ = active.terminate().await;

    figures(
        report,
        NAME,
        "SIGKILL of the active -> answer by the standby",
        &failovers,
    );
    report.method = format!(
        "two daemons on one PostgreSQL database, Telegram on the fake Bot API (long polling, \
         1 s poll timeout), storage.leaseTimeout {LEASE_SECONDS}s; {ROUNDS} rounds, each: a new \
         standby launched and seen standing by, the active one SIGKILLed, a Telegram message \
         sent at once, timed until its answer reaches the fake Telegram; target: leaseTimeout \
         + {TARGET_BEYOND_LEASE_SECONDS} s"
    );
    report.details = json!({ "failoverSeconds": failovers });
    Ok(())
}

/// The median and worst of `failovers` (seconds), each held to the lease + 2 s.
pub(super) fn figures(
    report: &mut ScenarioReport,
    name: &'static str,
    what: &str,
    failovers: &[f64],
) {
    let worst = failovers.iter().copied().fold(0.0, f64::max);
    let mut sorted = failovers.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    let bound = LEASE_SECONDS as f64 + TARGET_BEYOND_LEASE_SECONDS;
    report.figures.push(Figure::with_target(
        name,
        format!("{what}, median (leaseTimeout {LEASE_SECONDS}s)"),
        median,
        "s",
        Target::AtMost(bound),
    ));
    report.figures.push(Figure::with_target(
        name,
        format!("{what}, worst"),
        worst,
        "s",
        Target::AtMost(bound),
    ));
}

/// The failover scenarios' daemon config: Telegram on `tg` (one allowed user, 42, polled
/// with a 1 s timeout) and the database `storage` with a lease of [`LEASE_SECONDS`].
pub(super) fn config(
    settings: &Settings,
    model: &FakeModel,
    tg: &FakeTelegram,
    storage: &str,
) -> anyhow::Result<Value> {
    let base = rig::config(
        settings,
        &rig::DaemonConfig {
            model_url: &model.base_url(),
            port: 0,
            main_cap: 64,
            subagent_cap: 8,
            storage: Some(storage),
        },
    );
    let mut config: Value = serde_json::from_str(&base)?;
    config["storage"]["leaseTimeout"] = json!(format!("{LEASE_SECONDS}s"));
    config["channels"] = json!({ "telegram": {
        "enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
        "allowFrom": ["42"], "pollTimeoutSeconds": 1,
    } });
    Ok(config)
}

/// The user who writes to the bot.
pub(super) fn user() -> User {
    User::new(42, "ann", "Ann")
}
