//! Two real `switchboard run` processes on one PostgreSQL database: one is active, the
//! other stands by (binds nothing, polls nothing) and takes over when the active one is
//! killed (after `storage.leaseTimeout`), at once when it stops gracefully, and a process
//! whose lease was taken exits with code 75. Checked against the fake Telegram's full
//! delivery log and the database's own record.
//!
//! The one duplicate allowed is the documented at-least-once window (see
//! `faults_restart.rs`): a send the SIGKILL cut between Telegram accepting it and the outbox
//! committing `sent`; the next process logs how many rows it re-sends, and duplicates must
//! not exceed that count.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sqlx::{Connection as _, PgConnection, Row as _};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::fake_telegram::{Chat, FakeTelegram, User};
use switchboard_testkit::harness::{Gateway, GatewayBuilder};
use switchboard_testkit::pg::TestDb;

use crate::common::{assert_standing_by, config_for, free_port, get_json, get_text, BIN, WAIT};
use crate::record::{outbox_rows, registry, resent_rows};
use crate::subagents::spawn_call;

const TOKEN: &str = "123456:TEST-token";
/// The documented exit code of a process that lost its lease.
const EXIT_LEASE_LOST: i32 = 75;

fn ann() -> User {
    User::new(42, "ann", "Ann")
}

/// A gateway on `db` with Telegram on `tg`, `leaseTimeout` as given, on `port` (0: any).
fn builder(
    fake: &FakeModel,
    tg: &FakeTelegram,
    db: &TestDb,
    lease: &str,
    port: u16,
    patch: Value,
) -> GatewayBuilder {
    let mut cfg = json!({
        "gateway": {"port": port, "shutdownGrace": "2s"},
        "storage": {"url": db.url(), "leaseTimeout": lease},
        "channels": {"telegram": {"enabled": true, "botToken": TOKEN, "apiUrl": tg.api_url(),
                                  "allowFrom": ["42"], "pollTimeoutSeconds": 1}},
    });
    crate::common::merge(&mut cfg, &patch);
    GatewayBuilder::new(BIN).config(config_for(fake, cfg))
}

/// `GET /api/status` of `gw`: (its lease owner id, the gateway lease's owner and fence).
async fn lease_status(gw: &Gateway) -> (String, String, i64) {
    let s = get_json(gw, "/api/status").await;
    let gateway = s["leases"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|l| l["name"] == "gateway")
        .cloned()
        .unwrap_or_else(|| panic!("no gateway lease in {s}"));
    assert_eq!(gateway["mine"], true, "{s}");
    (
        s["leaseOwner"].as_str().unwrap().to_owned(),
        gateway["owner"].as_str().unwrap().to_owned(),
        gateway["fence"].as_i64().unwrap(),
    )
}

/// Launches `b` as a standby of `a`'s database and checks that it stands by: its log names
/// `a` as the active process, it has no ready line and nothing listens on its `port`.
async fn stands_by(b: &mut Gateway, a_owner: &str, port: u16) {
    let line = b
        .wait_for_log("standing by: ", WAIT)
        .await
        .map(|()| {
            b.stderr_lines()
                .into_iter()
                .find(|l| l.contains("standing by: "))
                .unwrap()
        })
        .unwrap();
    assert!(
        line.contains(&format!(
            "standing by: {a_owner} is active on this database"
        )),
        "{line}"
    );
    assert_standing_by(b, port).await;
}

/// Telegram polled by A; B stands by; A is SIGKILLed mid-stream; B takes over and every
/// update is answered exactly once, and the two never polled at the same time.
#[tokio::test]
async fn a_standby_takes_over_telegram_when_the_active_process_is_killed() {
    const N: usize = 16;
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    for i in 0..N {
        let tag = format!("u{i:02}x");
        // Twice: a call the kill cut is made again by B.
        for _ in 0..2 {
            let answer = Step::text(format!("answer {tag}"));
            fake.push_for(&tag, Step::delayed(Duration::from_millis(150), answer));
        }
    }
    // One run per update (not several collected into one), so each gets its own answer.
    let followup = json!({"messages": {"queue": {"mode": "followup"}}});
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut a = builder(&fake, &tg, &db, "2s", 0, followup.clone())
        .start()
        .await
        .unwrap();
    let (a_owner, holder, fence) = lease_status(&a).await;
    assert_eq!(holder, a_owner);
    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();

    let b_port = free_port();
    let mut b = builder(&fake, &tg, &db, "2s", b_port, followup)
        .launch()
        .await
        .unwrap();
    stands_by(&mut b, &a_owner, b_port).await;

    for i in 0..N / 2 {
        tg.user_message(Chat::private(42), ann(), &format!("u{i:02}x"));
    }
    tg.wait_for_sent(3, WAIT).await.unwrap();
    a.kill().await.unwrap();
    let killed = Instant::now();
    for i in N / 2..N {
        tg.user_message(Chat::private(42), ann(), &format!("u{i:02}x"));
    }
    b.wait_ready().await.unwrap();
    println!(
        "failover: SIGKILL to the standby's ready line in {:?} (leaseTimeout 2s)",
        killed.elapsed()
    );
    let (b_owner, holder, b_fence) = lease_status(&b).await;
    assert_eq!(holder, b_owner);
    assert_ne!(b_owner, a_owner);
    assert_eq!(b_fence, fence + 1, "a new holder, a new fence");
    let metrics = get_text(&b, "/metrics").await;
    assert!(
        metrics.contains("switchboard_lease_held{name=\"gateway\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "switchboard_lease_fence{{name=\"gateway\"}} {b_fence}\n"
        )),
        "{metrics}"
    );

    tg.wait_for_sent(N, WAIT).await.unwrap();
    let status = b.terminate().await.unwrap();
    assert_eq!(status.code(), Some(0));
    let mut answered: HashMap<String, usize> = HashMap::new();
    for m in tg.sent_messages() {
        *answered.entry(m.text.clone()).or_default() += 1;
    }
    // What each model call answered (the last user message), for a failure's report.
    let asked: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| {
            r.body["messages"]
                .as_array()
                .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
                .map(|m| m["content"].to_string())
                .unwrap_or_default()
        })
        .collect();
    let mut c = PgConnection::connect(db.url()).await.unwrap();
    let transcript: Vec<String> = sqlx::query(
        "SELECT m.seq, m.run_id, m.role, m.content, r.status, r.reply FROM messages m
           LEFT JOIN runs r ON r.id = m.run_id ORDER BY m.seq",
    )
    .fetch_all(&mut c)
    .await
    .unwrap()
    .iter()
    .map(|r| {
        format!(
            "{} {:?} {} {} {:?} {:?}",
            r.get::<i64, _>(0),
            r.get::<Option<String>, _>(1),
            r.get::<String, _>(2),
            r.get::<String, _>(3),
            r.get::<Option<String>, _>(4),
            r.get::<Option<String>, _>(5)
        )
    })
    .collect();
    c.close().await.unwrap();
    let mut duplicates = 0;
    for i in 0..N {
        let n = answered
            .get(&format!("answer u{i:02}x"))
            .copied()
            .unwrap_or(0);
        assert!(
            n >= 1,
            "update u{i:02}x never answered: {answered:?}\nmodel calls: {asked:#?}\ntranscript: {transcript:#?}\nA: {:#?}\nB: {:#?}",
            a.stderr_lines(),
            b.stderr_lines()
        );
        duplicates += n - 1;
    }
    assert_eq!(answered.len(), N, "nothing but the answers: {answered:?}");
    assert!(
        duplicates <= resent_rows(&b),
        "{duplicates} duplicates: {answered:?}"
    );
    // Every update reached the model (a call the kill cut is made again by B).
    for i in 0..N {
        let tag = format!("u{i:02}x");
        assert!(
            fake.requests()
                .iter()
                .any(|r| format!("{r:?}").contains(&tag)),
            "{tag}"
        );
    }
    assert_eq!(tg.conflicts(), 0, "never two pollers at once");
    // The database password is never logged (the store's log line masks it).
    let password = db
        .url()
        .split("://")
        .nth(1)
        .and_then(|r| r.split('@').next())
        .and_then(|u| u.split(':').nth(1))
        .unwrap();
    assert!(password.len() >= 8, "the test cluster has a password");
    for line in a.stderr_lines().iter().chain(&b.stderr_lines()) {
        assert!(!line.contains(password), "{line}");
    }
    assert!(
        b.stderr_lines().iter().any(|l| l.contains(":***@")),
        "the store's line shows the masked URL"
    );
    tg.assert_no_violations();
    fake.assert_no_violations();
}

/// SIGTERM of the active process releases the lease: the standby takes over without
/// waiting for it to expire (a 30 s lease; the standby is ready well before), and answers.
#[tokio::test]
async fn a_graceful_stop_hands_over_at_once() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut a = builder(&fake, &tg, &db, "30s", 0, json!({}))
        .start()
        .await
        .unwrap();
    let (a_owner, _, fence) = lease_status(&a).await;
    tg.user_message(Chat::private(42), ann(), "before");
    tg.wait_for_sent(1, WAIT).await.unwrap();
    let b_port = free_port();
    let mut b = builder(&fake, &tg, &db, "30s", b_port, json!({}))
        .ready_timeout(Duration::from_secs(20))
        .launch()
        .await
        .unwrap();
    stands_by(&mut b, &a_owner, b_port).await;

    let stopped = Instant::now();
    assert_eq!(a.terminate().await.unwrap().code(), Some(0));
    a.wait_for_log("released the gateway lease", WAIT)
        .await
        .unwrap();
    // Ready within 20 s of the stop, where the lease would have lasted 30 s.
    b.wait_ready().await.unwrap();
    println!(
        "graceful handover: SIGTERM to the standby's ready line in {:?}",
        stopped.elapsed()
    );
    let (b_owner, _, b_fence) = lease_status(&b).await;
    assert_ne!(b_owner, a_owner);
    assert_eq!(b_fence, fence + 1);
    // `switchboard status` (it finds B from the config: B's fixed port) names the holder.
    let out = crate::common::output(
        b.command()
            .args(["status", "--config"])
            .arg(b.config_path()),
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "lease gateway: {b_owner} (fence {b_fence}) since "
        )) && stdout.contains(", this process"),
        "{stdout}"
    );
    tg.user_message(Chat::private(42), ann(), "after");
    let sent = tg.wait_for_sent(2, WAIT).await.unwrap();
    assert_eq!(
        sent.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        vec!["echo: before", "echo: after"]
    );
    // A standby answers SIGTERM at once: exit 0, having started nothing.
    let c_port = free_port();
    let mut c = builder(&fake, &tg, &db, "30s", c_port, json!({}))
        .launch()
        .await
        .unwrap();
    stands_by(&mut c, &b_owner, c_port).await;
    assert_eq!(c.terminate().await.unwrap().code(), Some(0));
    c.wait_for_log("stopped while standing by", WAIT)
        .await
        .unwrap();
    assert_eq!(lease_status(&b).await.1, b_owner);
    assert_eq!(b.terminate().await.unwrap().code(), Some(0));
    assert_eq!(tg.conflicts(), 0);
}

/// A main run spawns children on A; A is SIGKILLed with children running, announcing and
/// queued; B takes over and every child is announced exactly once.
#[tokio::test]
async fn sub_agents_cut_by_a_kill_are_announced_once_by_the_standby() {
    const N: usize = 20;
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let calls = (0..N)
        .map(|i| spawn_call(&format!("fleet child {i}"), json!({})))
        .collect();
    fake.push_for("spawn the fleet", Step::ToolCalls(calls));
    fake.push_for("spawn the fleet", Step::Text("fleet spawned".into()));
    // More steps than children: calls the kill cut are made again by B.
    for i in 0..3 * N {
        let ms = 150 + 50 * (i as u64 % 7);
        fake.push_for(
            "fleet child",
            Step::delayed(Duration::from_millis(ms), Step::text("child done")),
        );
        fake.push_for(
            "Your task has ended",
            Step::delayed(Duration::from_millis(ms / 2), Step::text("child summary")),
        );
    }
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let patch = json!({"agents": {"defaults": {"subagents": {"maxConcurrent": 4}}}});
    let mut a = builder(&fake, &tg, &db, "2s", 0, patch.clone())
        .start()
        .await
        .unwrap();
    let (a_owner, _, _) = lease_status(&a).await;
    let b_port = free_port();
    let mut b = builder(&fake, &tg, &db, "2s", b_port, patch)
        .launch()
        .await
        .unwrap();
    stands_by(&mut b, &a_owner, b_port).await;

    tg.wait_for_call("getUpdates", 1, WAIT).await.unwrap();
    tg.user_message(Chat::private(42), ann(), "spawn the fleet");
    // Kill once a few children are done and the rest are not.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let rows = registry(&a).await;
        let done = rows.iter().filter(|r| r["outcome"].is_string()).count();
        if rows.len() == N && done >= 4 {
            assert!(done < N, "the kill must find children in flight");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "children never got going: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.kill().await.unwrap();
    b.wait_ready().await.unwrap();

    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let rows = registry(&b).await;
        let quiet = rows.len() == N
            && rows.iter().all(|r| {
                r["outcome"].is_string()
                    && r["announceState"] != "pending"
                    && r["announceState"] != "none"
            })
            && outbox_rows(&b, "pending").await == 0
            && outbox_rows(&b, "sending").await == 0;
        if quiet {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not quiet: {rows:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rows = registry(&b).await;
    assert_eq!(b.terminate().await.unwrap().code(), Some(0));

    let mut delivered: HashMap<String, usize> = HashMap::new();
    for m in tg.sent_messages() {
        if let Some(rest) = m.plain_text.strip_prefix("Status:") {
            let key = rest
                .split("sessionKey ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next());
            *delivered.entry(key.unwrap_or("?").to_owned()).or_default() += 1;
        }
    }
    let mut duplicates = 0;
    for r in &rows {
        let key = r["childSessionKey"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"));
        assert_eq!(r["outcome"], "success", "{r}");
        assert_eq!(r["announceState"], "queued", "{r}");
        let n = delivered.get(key).copied().unwrap_or(0);
        assert!(n >= 1, "never announced: {r}");
        duplicates += n - 1;
    }
    assert_eq!(delivered.len(), N, "{delivered:?}");
    assert!(
        duplicates <= resent_rows(&b),
        "{duplicates} duplicate announces: {delivered:?}"
    );
    // The database's own record: one announce row per child, each sent.
    let mut c = PgConnection::connect(db.url()).await.unwrap();
    let sent: i64 =
        sqlx::query("SELECT count(*) FROM outbox WHERE key LIKE 'announce:%' AND state = 'sent'")
            .fetch_one(&mut c)
            .await
            .unwrap()
            .get(0);
    assert_eq!(sent, N as i64);
    c.close().await.unwrap();
    assert_eq!(tg.conflicts(), 0);
    fake.assert_no_violations();
}

/// The stored Telegram offset (`channel_state`), as text.
async fn stored_offset(c: &mut PgConnection) -> Option<String> {
    sqlx::query("SELECT value FROM channel_state WHERE channel = 'telegram' AND key = 'offset'")
        .fetch_optional(c)
        .await
        .unwrap()
        .map(|r| r.get(0))
}

/// A process whose lease another process took (here: the row rewritten in the database,
/// as after a pause past its expiry) moves Telegram's offset no more (the write is fenced),
/// stops at its next renewal with exit code 75, and does not take the lease back. A 30 s
/// lease (renewed every 10 s) leaves the stale holder time to handle an update first.
#[tokio::test]
async fn a_process_that_lost_its_lease_exits_75() {
    let db = TestDb::create().await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let tg = FakeTelegram::start(TOKEN).await.unwrap();
    let mut a = builder(&fake, &tg, &db, "30s", 0, json!({}))
        .start()
        .await
        .unwrap();
    let (_, _, fence) = lease_status(&a).await;
    tg.user_message(Chat::private(42), ann(), "before");
    tg.wait_for_sent(1, WAIT).await.unwrap();
    let mut c = PgConnection::connect(db.url()).await.unwrap();
    // The offset is stored once the update is done with; wait for it.
    let deadline = tokio::time::Instant::now() + WAIT;
    let before = loop {
        if let Some(offset) = stored_offset(&mut c).await {
            break offset;
        }
        assert!(tokio::time::Instant::now() < deadline, "no offset stored");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let stolen = sqlx::query(
        "UPDATE leases SET owner = 'thief', fence = fence + 1,
                expires_at = switchboard_now_ms() + 600000 WHERE name = 'gateway'",
    )
    .execute(&mut c)
    .await
    .unwrap();
    assert_eq!(stolen.rows_affected(), 1);
    // Before its next renewal A may still handle an update; its offset write is refused.
    tg.user_message(Chat::private(42), ann(), "after the theft");
    let status = a.wait_exit().await.unwrap();
    assert_eq!(
        status.code(),
        Some(EXIT_LEASE_LOST),
        "{:#?}",
        a.stderr_lines()
    );
    let log = a.stderr_lines();
    assert!(log
        .iter()
        .any(|l| l.contains("the gateway lease was taken by another process")));
    assert!(
        !log.iter().any(|l| l.contains("released the gateway lease")),
        "no graceful drain"
    );
    let handled_after_theft = tg.sent_messages().len() == 2;
    println!("the stale holder handled an update after the theft: {handled_after_theft}");
    if handled_after_theft {
        // A handled it before noticing (the usual case): the fence kept the offset.
        assert!(
            log.iter()
                .any(|l| l.contains("the gateway lease changed hands")),
            "{log:#?}"
        );
    }
    assert_eq!(
        stored_offset(&mut c).await,
        Some(before),
        "the offset never moved after the theft"
    );
    let row = sqlx::query("SELECT owner, fence FROM leases WHERE name = 'gateway'")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(
        (row.get::<String, _>(0), row.get::<i64, _>(1)),
        ("thief".to_owned(), fence + 1)
    );
    c.close().await.unwrap();
}
