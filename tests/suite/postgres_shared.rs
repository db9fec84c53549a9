//! Two real `switchboard run` processes in shared mode (`storage.processes: "shared"`) on
//! one PostgreSQL database: both serve, Telegram is polled by exactly one of them (the
//! holder of `channel:telegram`; each process has its own `apiUrl` path on the fake
//! Telegram, so the fake tells who polled), the cron scheduler runs in one (`cron`), and
//! the other takes both over when the holder is killed or lets the channel go.
//!
//! Runs cut by a kill are not taken over by the other process yet (per-row run leases are
//! another part of shared mode), so these tests kill a process only once its runs have
//! ended: what they prove is the channel's handover.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sqlx::{Connection as _, PgConnection, Row as _};
use switchboard_testkit::fake_model::FakeModel;
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

use crate::common::{config_for, get_json, get_text, wait_outbox_sent, BIN, WAIT};

pub(crate) const TOKEN: &str = "123456:TEST-token";
const TELEGRAM: &str = "channel:telegram";

pub(crate) fn ann() -> User {
    User::new(42, "ann", "Ann")
}

/// The config of process `client` (its own path on the fake Telegram) on `db`.
pub(crate) fn config(
    fake: &FakeModel,
    tg: &FakeTelegram,
    db: &TestDb,
    client: &str,
    telegram: bool,
) -> String {
    config_for(
        fake,
        json!({
            "storage": {"url": db.url(), "leaseTimeout": "2s", "processes": "shared"},
            "channels": {"telegram": {"enabled": telegram, "botToken": TOKEN,
                                      "apiUrl": tg.api_url_for(client),
                                      "allowFrom": ["42"], "pollTimeoutSeconds": 1}},
            // One run per update, so each gets its own answer.
            "messages": {"queue": {"mode": "followup"}},
        }),
    )
}

async fn start(fake: &FakeModel, tg: &FakeTelegram, db: &TestDb, client: &str) -> Gateway {
    GatewayBuilder::new(BIN)
        .config(config(fake, tg, db, client, true))
        .start()
        .await
        .unwrap()
}

/// `/api/status` of `gw`: its lease owner id, and each lease's (owner, fence, mine) by name
/// (lapsed leases left out).
pub(crate) async fn leases(gw: &Gateway) -> (String, BTreeMap<String, (String, i64, bool)>) {
    let s = get_json(gw, "/api/status").await;
    assert_eq!(s["processes"], "shared", "{s}");
    let now = switchboard::store::now_ms();
    let held = s["leases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| l["expiresAt"].as_i64().unwrap() >= now)
        .map(|l| {
            let name = l["name"].as_str().unwrap().to_owned();
            let owner = l["owner"].as_str().unwrap().to_owned();
            (
                name,
                (owner, l["fence"].as_i64().unwrap(), l["mine"] == true),
            )
        })
        .collect();
    (s["leaseOwner"].as_str().unwrap().to_owned(), held)
}

/// `gw`'s Telegram channel in `/api/status`: (running, inbound).
async fn telegram_state(gw: &Gateway) -> (Value, Value) {
    let s = get_json(gw, "/api/status").await;
    let ch = s["channels"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "telegram")
        .cloned()
        .unwrap_or_else(|| panic!("no telegram channel in {s}"));
    (ch["running"].clone(), ch["inbound"].clone())
}

/// Waits (bounded) until `client` has polled.
async fn wait_polled_by(tg: &FakeTelegram, client: &str) {
    let deadline = Instant::now() + WAIT;
    while !tg.pollers().contains(&Some(client.to_owned())) {
        assert!(
            Instant::now() < deadline,
            "{client} never polled: {:?}",
            tg.pollers()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Catches: both processes polling (409s, updates handled twice), a process that polls
/// without the lease, a takeover that never happens or starts from the wrong offset, an
/// update lost or answered twice across the handover, and `/api/status` and `/metrics`
/// that do not say who holds what.
#[tokio::test]
async fn telegram_is_polled_by_one_process_and_taken_over_when_it_is_killed() {
    const N: usize = 12;
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut a = start(&fake, &tg, &db, "a").await;
    wait_polled_by(&tg, "a").await;
    let mut b = start(&fake, &tg, &db, "b").await;

    let (a_owner, held) = leases(&a).await;
    let (b_owner, seen_by_b) = leases(&b).await;
    assert_ne!(a_owner, b_owner);
    let (holder, a_fence, mine) = held[TELEGRAM].clone();
    assert_eq!((holder.as_str(), mine), (a_owner.as_str(), true));
    assert_eq!(held["cron"].0, a_owner, "the first process runs cron");
    assert!(
        !seen_by_b[TELEGRAM].2 && !seen_by_b["cron"].2,
        "{seen_by_b:?}"
    );
    assert_eq!(telegram_state(&a).await, (json!(true), json!(true)));
    assert_eq!(
        telegram_state(&b).await,
        (json!(true), json!(false)),
        "B sends only"
    );
    let b_metrics = get_text(&b, "/metrics").await;
    assert!(
        b_metrics.contains("switchboard_lease_held{name=\"channel:telegram\"} 0\n")
            && b_metrics.contains("switchboard_lease_held{name=\"cron\"} 0\n"),
        "{b_metrics}"
    );
    assert!(get_text(&a, "/metrics")
        .await
        .contains("switchboard_lease_held{name=\"channel:telegram\"} 1\n"));

    // The first half, answered while A polls; A is killed once they are all delivered.
    for i in 0..N / 2 {
        tg.user_message(Chat::private(42), ann(), &format!("u{i:02}"));
    }
    tg.wait_for_sent(N / 2, WAIT).await.unwrap();
    wait_outbox_sent(&a, (N / 2) as u64).await;
    a.kill().await.unwrap();
    let killed = Instant::now();
    // The second half waits in the fake: nobody polls until B takes the channel over.
    for i in N / 2..N {
        tg.user_message(Chat::private(42), ann(), &format!("u{i:02}"));
    }
    let sent = tg.wait_for_sent(N / 2 + 1, WAIT).await.unwrap();
    println!(
        "failover: SIGKILL of the Telegram holder to the first update answered by the other process in {:?} (leaseTimeout 2s)",
        sent[N / 2].at.duration_since(killed)
    );
    tg.wait_for_sent(N, WAIT).await.unwrap();

    // Each lease is taken over by its own keeper, on its own beat: the channel's may be
    // taken (and the messages answered) a beat before cron's.
    let deadline = Instant::now() + WAIT;
    let held = loop {
        let (_, held) = leases(&b).await;
        if held
            .get("cron")
            .is_some_and(|(owner, _, _)| *owner == b_owner)
            || Instant::now() > deadline
        {
            break held;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (holder, b_fence, mine) = held[TELEGRAM].clone();
    assert_eq!((holder.as_str(), mine), (b_owner.as_str(), true));
    assert_eq!(b_fence, a_fence + 1, "a new holder, a new fence");
    assert_eq!(
        held.get("cron").map(|l| l.0.as_str()),
        Some(b_owner.as_str()),
        "cron was taken over too"
    );
    assert_eq!(telegram_state(&b).await, (json!(true), json!(true)));
    assert!(get_text(&b, "/metrics")
        .await
        .contains("switchboard_lease_held{name=\"channel:telegram\"} 1\n"));
    // `switchboard status` says it too.
    let out = crate::common::output(b.command().args(["status", "--url", &b.base_url()])).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("processes: shared, this process {b_owner}"))
            && stdout.contains(&format!(
                "lease channel:telegram: {b_owner} (fence {b_fence}) since "
            )),
        "{stdout}"
    );

    assert_eq!(b.terminate().await.unwrap().code(), Some(0));
    // Every update answered exactly once, against the fake's whole log.
    let answers: Vec<String> = tg.sent_messages().into_iter().map(|m| m.text).collect();
    let expected: Vec<String> = (0..N).map(|i| format!("echo: u{i:02}")).collect();
    assert_eq!(answers, expected);
    // B polled only after A was gone, from where A left off.
    let b_polls: Vec<_> = tg
        .calls_to("getUpdates")
        .into_iter()
        .filter(|c| c.client.as_deref() == Some("b"))
        .collect();
    assert!(
        b_polls.iter().all(|c| c.at > killed),
        "B polled while A held the channel"
    );
    let last_of_a = tg
        .calls_to("getUpdates")
        .into_iter()
        .filter(|c| c.client.as_deref() == Some("a"))
        .filter_map(|c| c.body["offset"].as_i64())
        .max();
    assert_eq!(
        b_polls[0].body["offset"].as_i64(),
        last_of_a,
        "B starts at the stored offset"
    );
    let mut c = PgConnection::connect(db.url()).await.unwrap();
    let inbox: i64 = sqlx::query("SELECT count(*) FROM messages WHERE role = 'user'")
        .fetch_one(&mut c)
        .await
        .unwrap()
        .get(0);
    assert_eq!(inbox, N as i64, "each update stored once");
    c.close().await.unwrap();
    assert_eq!(tg.conflicts(), 0, "never two pollers at once");
    tg.assert_no_violations();
    fake.assert_no_violations();
}

/// The holder's config reload that disables Telegram releases the channel (it logs so) and
/// the other process takes it over; enabled again, the first process waits, sending only,
/// until the holder stops gracefully and releases it; a change of the holder's section
/// releases and takes it again. Catches: a disabled channel whose lease stays held
/// (renewed with the process: nobody polls again), a re-enabled one that polls beside the
/// holder, and a restarted adapter that never takes the channel back.
#[tokio::test]
async fn a_reload_that_disables_telegram_hands_the_channel_over() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut a = start(&fake, &tg, &db, "a").await;
    wait_polled_by(&tg, "a").await;
    let mut b = start(&fake, &tg, &db, "b").await;
    let (a_owner, held) = leases(&a).await;
    assert_eq!(held[TELEGRAM].0, a_owner);

    std::fs::write(a.config_path(), config(&fake, &tg, &db, "a", false)).unwrap();
    a.wait_for_log("channel:telegram: released", WAIT)
        .await
        .unwrap();
    wait_polled_by(&tg, "b").await;
    let (b_owner, held) = leases(&b).await;
    assert_eq!(held[TELEGRAM].0, b_owner);
    tg.user_message(Chat::private(42), ann(), "after the reload");
    tg.wait_for_sent(1, WAIT).await.unwrap();

    std::fs::write(a.config_path(), config(&fake, &tg, &db, "a", true)).unwrap();
    a.wait_for_log(&format!("channel:telegram: held by {b_owner}"), WAIT)
        .await
        .unwrap();
    assert_eq!(telegram_state(&a).await, (json!(true), json!(false)));
    let polls_of_a = tg
        .calls_to("getUpdates")
        .iter()
        .filter(|c| c.client.as_deref() == Some("a"))
        .count();
    tg.user_message(Chat::private(42), ann(), "again");
    tg.wait_for_sent(2, WAIT).await.unwrap();
    let polls_now = tg
        .calls_to("getUpdates")
        .iter()
        .filter(|c| c.client.as_deref() == Some("a"))
        .count();
    assert_eq!(polls_now, polls_of_a, "A waits while B holds the channel");
    assert_eq!(b.terminate().await.unwrap().code(), Some(0));
    // B's stop released the channel: A takes it over without waiting for an expiry.
    wait_polled_by_again(&tg, "a", polls_of_a).await;
    // A change of the holder's channel section restarts its adapter: the old loop releases
    // the lease, the new one takes it again and polls from the stored offset.
    let mark = a.log_mark();
    let mut changed: Value = serde_json::from_str(&config(&fake, &tg, &db, "a", true)).unwrap();
    changed["channels"]["telegram"]["pollTimeoutSeconds"] = json!(2);
    std::fs::write(a.config_path(), changed.to_string()).unwrap();
    a.wait_for_log_since(mark, "channel:telegram: released", WAIT)
        .await
        .unwrap();
    a.wait_for_log_since(mark, "channel:telegram: this process holds it now", WAIT)
        .await
        .unwrap();
    tg.user_message(Chat::private(42), ann(), "after the change");
    tg.wait_for_sent(3, WAIT).await.unwrap();
    assert_eq!(a.terminate().await.unwrap().code(), Some(0));
    let answers: Vec<String> = tg.sent_messages().into_iter().map(|m| m.text).collect();
    assert_eq!(
        answers,
        [
            "echo: after the reload",
            "echo: again",
            "echo: after the change"
        ]
    );
    assert_eq!(tg.conflicts(), 0);
    tg.assert_no_violations();
}

/// Waits (bounded) until `client` has polled more than `before` times.
pub(crate) async fn wait_polled_by_again(tg: &FakeTelegram, client: &str, before: usize) {
    let deadline = Instant::now() + WAIT;
    loop {
        let polls = tg
            .calls_to("getUpdates")
            .iter()
            .filter(|c| c.client.as_deref() == Some(client))
            .count();
        if polls > before {
            return;
        }
        assert!(Instant::now() < deadline, "{client} never polled again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
