//! A whole turn through the runtime on each store engine: a chat message is taken,
//! queued, run against the (fake) model, its answer stored and its reply queued for the
//! chat. The store's own suite tests each method; this drives them in the order a turn
//! does, with the runtime's lanes and tasks around them.

use std::time::Duration;

use switchboard_channels::{ChatKind, InboundMessage, Origin};
use switchboard_testkit::fake_model::{FakeModel, Step};
use switchboard_testkit::pg::TestDb;

use super::*;
use crate::store::{Role, RunStatus, Store};

/// The config of a runtime on `fake`.
fn config(fake: &FakeModel) -> String {
    format!(
        r#"{{models: {{providers: {{fake: {{api: "openai-chat", baseUrl: "{}", apiKey: "k",
            models: [{{id: "m"}}]}}}}}}, agents: {{defaults: {{model: "fake/m"}}}}}}"#,
        fake.base_url()
    )
}

/// One message in, one answer out, on `store`.
async fn one_turn(store: Store) {
    let fake = FakeModel::start().await.unwrap();
    fake.push_for("how are you", Step::text("fine, thanks"));
    let (_dir, rt) = crate::runtime::testing::runtime_on(&config(&fake), store);
    let origin = Origin::webchat("chat-1", ChatKind::Direct);
    let msg = InboundMessage {
        origin: origin.clone(),
        sender_id: "ann".into(),
        sender_name: None,
        sender_username: None,
        text: "how are you".into(),
        message_id: Some("m-1".into()),
        addressed: true,
        press: None,
        media: Vec::new(),
    };
    assert_eq!(handle_inbound(&rt, msg.clone()).await, Handled::Taken);
    // The platform delivers it again: taken, not run twice.
    assert_eq!(handle_inbound(&rt, msg).await, Handled::Taken);

    let cfg = rt.config();
    let key = session_key(cfg.session.dm_scope, "main", &origin, "ann");
    let run = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let runs = rt.store.session_runs(&key, 10).await.unwrap();
            if let Some(run) = runs.first().filter(|r| r.status.is_terminal()) {
                return (runs.len(), run.clone());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the run ends");
    assert_eq!((run.0, run.1.status), (1, RunStatus::Succeeded));
    let session = rt.store.active_session(&key).await.unwrap().unwrap();
    let transcript: Vec<(Role, String)> = rt
        .store
        .transcript(&session.id)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.role, m.content))
        .collect();
    assert_eq!(
        transcript,
        [
            (Role::User, "how are you".to_string()),
            (Role::Assistant, "fine, thanks".to_string())
        ]
    );
    let reply = format!("run:{}:reply", run.1.id);
    assert!(
        rt.store.outbox_state(&reply).await.unwrap().is_some(),
        "the reply is queued for the chat"
    );
    assert_eq!(rt.store.inbox_len(&key).await.unwrap(), 0);
    assert_eq!(fake.request_count(), 1);
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_turn_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    one_turn(Store::open(&url).await.unwrap()).await;
}

#[tokio::test]
async fn a_turn_on_postgres() {
    let db = TestDb::create().await.unwrap();
    one_turn(Store::open_postgres(db.url()).await.unwrap()).await;
}

/// Catches: a read or a write added to every turn (each is two thread hand-offs, which
/// on a small machine cost more than the SQL: docs/performance.md, "Few statements per
/// turn"). A turn of a session that ran before is two round trips on SQLite: the message
/// accepted with its run started, and the run's end with its answer; what the start also
/// needs (the session, its `/model` choices, whether it was compacted) is cached.
#[tokio::test]
async fn a_turn_of_a_known_session_is_two_round_trips_to_the_database_and_a_new_ones_four() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let store = Store::open(&url).await.unwrap();
    let fake = FakeModel::start().await.unwrap();
    let (_dir, rt) = crate::runtime::testing::runtime_on(&config(&fake), store);
    let key = "agent:main:api-client";
    let origin = Origin {
        channel: crate::store::API_CHANNEL.into(),
        account: None,
        chat_id: key.into(),
        thread_id: None,
        kind: ChatKind::Direct,
        reply_handle: None,
    };
    let mut trips = Vec::new();
    for text in ["first", "second", "third"] {
        fake.push_for(text, Step::text("ok"));
        let before = rt.store.round_trips_for_tests().unwrap();
        let mut ends = rt.events.run_ends.subscribe(key);
        let submission = crate::agent::dispatch::Submission {
            session_key: key,
            agent_id: "main",
            origin: &origin,
            sender_id: "api",
            text,
        };
        let sub = crate::agent::dispatch::submit_message(&rt, &submission)
            .await
            .unwrap();
        let ended = ends
            .wait_for_claiming_run(sub.inbox_id, Duration::from_secs(20))
            .await;
        assert!(
            matches!(ended, crate::runtime::run_ends::RunWait::Ended(ref e) if e.status == RunStatus::Succeeded),
            "{text}: {ended:?}"
        );
        let after = rt.store.round_trips_for_tests().unwrap();
        trips.push((after.0 - before.0, after.1 - before.1));
    }
    // The first turn makes the session: one write more, and one read (the key's `/model`
    // choices, read before its session exists: a key new to the cache may have one in
    // the database). Its compaction is not read: a session made just now has none.
    assert_eq!(
        trips,
        [(1, 3), (0, 2), (0, 2)],
        "(reads, writes) of each turn"
    );
}
