//! Shared mode and Discord: two real processes on one PostgreSQL database, one Discord
//! gateway session between them (the holder of `channel:discord`), taken over by the other
//! when the holder is killed. As in `postgres_shared.rs`, the kill comes once the holder's
//! runs have ended (runs cut by a kill are another part of shared mode).

use std::time::Instant;

use serde_json::json;
use switchboard_testkit::fake_discord::{DUser, FakeDiscord, BOT_ID};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

use crate::common::{config_for, get_json, wait_outbox_sent, BIN, WAIT};

const TOKEN: &str = "discord-test-token";
const GUILD: u64 = 500;
const GENERAL: u64 = 501;

async fn start(fake: &FakeModel, dc: &FakeDiscord, db: &TestDb) -> Gateway {
    let cfg = config_for(
        fake,
        json!({
            "storage": {"url": db.url(), "leaseTimeout": "2s", "processes": "shared"},
            "channels": {"discord": {"enabled": true, "token": TOKEN, "apiUrl": dc.api_url(),
                                     "allowFrom": ["42"], "guilds": {GUILD.to_string(): {}}}},
        }),
    );
    GatewayBuilder::new(BIN).config(cfg).start().await.unwrap()
}

/// `gw`'s Discord channel in `/api/status`: whether it runs the gateway session.
async fn runs_the_session(gw: &Gateway) -> bool {
    let s = get_json(gw, "/api/status").await;
    let ch = s["channels"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "discord")
        .cloned()
        .unwrap_or_else(|| panic!("no discord channel in {s}"));
    assert_eq!(ch["running"], true, "every process sends: {s}");
    ch["inbound"] == true
}

fn say(dc: &FakeDiscord, text: &str) {
    dc.guild_message(
        GUILD,
        GENERAL,
        DUser::new(42, "ann"),
        &format!("<@{BOT_ID}> {text}"),
    );
}

/// Catches: two processes each opening a gateway session (every message handled twice),
/// a process that opens one without the lease, and a takeover that never happens.
#[tokio::test]
async fn one_process_holds_the_discord_session_and_the_other_takes_it_over() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let dc = FakeDiscord::start(TOKEN).await.unwrap();
    dc.add_guild(GUILD, "team", &[GENERAL]);
    let mut a = start(&fake, &dc, &db).await;
    dc.wait_ready(1, WAIT).await.unwrap();
    let b = start(&fake, &dc, &db).await;
    assert!(runs_the_session(&a).await);
    assert!(!runs_the_session(&b).await, "B sends only");

    say(&dc, "first");
    dc.wait_for_sent(1, WAIT).await.unwrap();
    wait_outbox_sent(&a, 1).await;
    assert_eq!(dc.identifies(), 1, "one gateway session between the two");
    a.kill().await.unwrap();
    let killed = Instant::now();
    dc.wait_ready(2, WAIT).await.unwrap();
    println!(
        "discord: SIGKILL of the holder to the other's READY in {:?} (leaseTimeout 2s)",
        killed.elapsed()
    );
    assert!(runs_the_session(&b).await);
    say(&dc, "second");
    dc.wait_for_sent(2, WAIT).await.unwrap();

    let mut b = b;
    assert_eq!(b.terminate().await.unwrap().code(), Some(0));
    let sent: Vec<String> = dc.sent_messages().into_iter().map(|m| m.content).collect();
    assert_eq!(sent, ["echo: first", "echo: second"]);
    assert_eq!(
        dc.identifies(),
        2,
        "B opened its session only after the kill"
    );
    dc.assert_no_violations();
}
