//! Fault test: SIGKILL (now and then SIGTERM) at seeded random moments while over a
//! hundred sub-agents are in flight (running, queued, in their announce step, in the
//! outbox), restarting each time.
//! In the end every child is announced exactly once and every archive timer has fired,
//! checked against the system's own record (the registry, the outbox rows by key, the
//! timers) and the fake Telegram's full delivery log once the daemon has gone quiet.
//!
//! The one duplicate allowed is the documented at-least-once window: a send the crash cut
//! off between the channel accepting it and the outbox committing `sent`. Such rows are
//! re-sent at the next start, which logs how many; duplicates must not exceed that count.
//!
//! Knobs (environment of the test process): `SWITCHBOARD_FAULT_SEED` replays a run (the
//! seed is printed), `SWITCHBOARD_FAULT_KILLS` (default 4) for longer runs,
//! `SWITCHBOARD_FAULT_CHILDREN` (default 120, or 30 per kill if more).

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use switchboard::store::Store;
use switchboard_testkit::fake_model::{FakeModel, Step, ToolCall};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};
use switchboard_testkit::harness::Gateway;

use crate::common::{start, WAIT};
use crate::record::{outbox_rows, registry, resent_rows};
use crate::subagents::spawn_call;

const TOKEN: &str = "123456:TEST-token";
/// How long the daemon may take to finish everything after the last restart.
const QUIET_WITHIN: Duration = Duration::from_secs(120);

/// splitmix64: a small seeded generator (no dependency), enough for delays and choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..hi` (milliseconds).
    fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo))
    }
}

fn knob(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Whether the daemon has nothing left to do for the `n` children: every run ended, every
/// announce completed, every `cleanup: "delete"` child archived, nothing left to deliver.
async fn quiet(gw: &Gateway, n: usize) -> bool {
    let rows = registry(gw).await;
    rows.len() == n
        && rows.iter().all(|r| {
            r["outcome"].is_string()
                && !matches!(r["announceState"].as_str(), Some("none" | "pending"))
                && (r["cleanup"] != "delete" || r["archivedAt"].is_i64())
        })
        && outbox_rows(gw, "pending").await == 0
        && outbox_rows(gw, "sending").await == 0
}

/// The child session key named in an announce's stats line.
fn announced_key(text: &str) -> Option<String> {
    let rest = text.split("sessionKey ").nth(1)?;
    Some(rest.split_whitespace().next()?.to_string())
}

#[tokio::test]
async fn sigkills_across_a_hundred_children_announce_each_once_and_fire_every_timer() {
    let seed = knob("SWITCHBOARD_FAULT_SEED").unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let kills = knob("SWITCHBOARD_FAULT_KILLS").unwrap_or(4);
    // Enough work that every kill finds children in flight (about 2 s of it per kill).
    let n = knob("SWITCHBOARD_FAULT_CHILDREN").unwrap_or(120.max(30 * kills)) as usize;
    println!("fault test: seed {seed} (SWITCHBOARD_FAULT_SEED={seed} replays it), {kills} kills, {n} children");
    let mut rng = Rng(seed);

    let fake = FakeModel::start().await.unwrap();
    let calls: Vec<ToolCall> = (0..n)
        .map(|i| {
            let cleanup = if i % 2 == 0 { "delete" } else { "keep" };
            spawn_call(&format!("fleet child {i}"), json!({"cleanup": cleanup}))
        })
        .collect();
    fake.push_for("spawn the fleet", Step::ToolCalls(calls));
    fake.push_for("spawn the fleet", Step::Text("fleet spawned".into()));
    // Small delays, so that every kill finds children in each phase; more steps than
    // children, as cut calls are made again after a restart (then the echo answers).
    for _ in 0..3 * n {
        fake.push_for(
            "fleet child",
            Step::delayed(rng.millis(100, 600), Step::text("child done")),
        );
        let answer = if rng.next() % 10 == 0 {
            "ANNOUNCE_SKIP"
        } else {
            "child summary"
        };
        fake.push_for(
            "Your task has ended",
            Step::delayed(rng.millis(50, 400), Step::text(answer)),
        );
    }
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let telegram = json!({"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
                          "allowFrom": ["42"], "pollTimeoutSeconds": 1});
    let mut gw = start(
        &fake,
        json!({"gateway": {"shutdownGrace": "300ms"}, "channels": {"telegram": telegram},
               "agents": {"defaults": {"subagents": {"maxConcurrent": 8, "archiveAfterMinutes": 0}}}}),
    )
    .await;
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    tg.user_message(
        Chat::private(42),
        User::new(42, "ann", "Ann"),
        "spawn the fleet",
    );
    // Every child is registered (the spawns commit one by one) before the first kill.
    for _ in 0..600 {
        if registry(&gw).await.len() == n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(registry(&gw).await.len(), n, "all children spawned");

    for k in 0..kills {
        let after = rng.millis(0, 1500);
        tokio::time::sleep(after).await;
        let rows = registry(&gw).await;
        let running = rows.iter().filter(|r| r["outcome"].is_null()).count();
        let announcing = rows
            .iter()
            .filter(|r| r["announceState"] == "pending")
            .count();
        // Mostly SIGKILL; now and then a SIGTERM, whose short grace cuts runs (they are
        // checkpointed) and announce steps (they stay pending, no attempt counted).
        let graceful = rng.next() % 4 == 0;
        println!(
            "{} {} after {after:?}: {running} children without an outcome, {announcing} announces pending, {} deliveries so far",
            if graceful { "SIGTERM" } else { "SIGKILL" },
            k + 1,
            tg.sent_messages().len()
        );
        if graceful {
            assert_eq!(gw.terminate().await.unwrap().code(), Some(0));
        } else {
            gw.kill().await.unwrap();
        }
        gw.restart().await.unwrap();
    }

    let deadline = tokio::time::Instant::now() + QUIET_WITHIN;
    while !quiet(&gw, n).await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not quiet within {QUIET_WITHIN:?} (seed {seed}): {:#?}",
            registry(&gw)
                .await
                .into_iter()
                .filter(|r| r["announceState"] == "pending" || r["outcome"].is_null())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let resent = resent_rows(&gw) as u64;
    assert_eq!(gw.terminate().await.unwrap().code(), Some(0));

    // The delivery log: announces by child session key.
    let mut delivered: HashMap<String, usize> = HashMap::new();
    for m in tg.sent_messages() {
        if m.plain_text.starts_with("Status:") {
            let key = announced_key(&m.plain_text)
                .unwrap_or_else(|| panic!("an announce without its session key: {}", m.plain_text));
            *delivered.entry(key).or_default() += 1;
        }
    }

    // The system's own record.
    let url = switchboard::config::Config::default().database_url(gw.state_dir());
    let store = Store::open(&url).await.unwrap();
    let children = store.all_subagents(10_000).await.unwrap();
    assert_eq!(children.len(), n);
    let (mut duplicates, mut retried) = (0, 0);
    for c in &children {
        let what = format!("child {} ({}), seed {seed}", c.run_id, c.task);
        assert_eq!(c.outcome.map(|o| o.as_str()), Some("success"), "{what}");
        assert_eq!(c.status.as_str(), "succeeded", "{what}");
        let outbox = store
            .outbox_state(&format!("announce:{}", c.run_id))
            .await
            .unwrap();
        let got = delivered.get(&c.child_session_key).copied().unwrap_or(0);
        match c.announce_state.as_str() {
            "queued" => {
                let (state, attempts) = outbox.unwrap_or_else(|| panic!("no outbox row: {what}"));
                assert_eq!(state, "sent", "{what}");
                assert!(attempts >= 1, "{what}");
                assert!(got >= 1, "never delivered: {what}");
                duplicates += got - 1;
                // A second attempt only after a crash cut the first one (the channel
                // never refuses here).
                retried += attempts as u64 - 1;
            }
            "skipped" => {
                assert_eq!(outbox, None, "{what}");
                assert_eq!(got, 0, "a skipped announce was posted: {what}");
            }
            other => panic!("announce {other}: {what}"),
        }
        assert_eq!(c.announce_attempts, 0, "no announce failed: {what}");
        if c.cleanup.as_str() == "delete" {
            assert!(c.archived_at.is_some(), "archive timer never fired: {what}");
        } else {
            assert_eq!(c.archived_at, None, "archived without a timer: {what}");
        }
    }
    assert_eq!(store.next_timer().await.unwrap(), None, "every timer fired");
    store.close().await;
    println!(
        "fault test: {} announces delivered, {duplicates} duplicates, {resent} rows re-sent after crashes",
        delivered.values().sum::<usize>()
    );
    assert!(
        retried <= resent,
        "{retried} announce deliveries were attempted again but only {resent} rows were re-sent after a crash (seed {seed})"
    );
    assert!(
        duplicates as u64 <= resent,
        "{duplicates} duplicate announces but only {resent} rows were re-sent after a crash (seed {seed})"
    );
    assert_eq!(
        delivered.len(),
        children
            .iter()
            .filter(|c| c.announce_state.as_str() == "queued")
            .count(),
        "announces only for the registry's children"
    );
    fake.assert_no_violations();
}
