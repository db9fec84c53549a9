//! The SQLite engine's own tests: the group-commit writer answers every caller of a batch
//! with exactly its own rows and commits or fails each script on its own; rows stored
//! before a migration still deliver after it; every script binds one value per placeholder;
//! the WAL is started over under a writer that never pauses, and SQLite is built without
//! its allocation statistics (`checkpoints`).

use std::borrow::Cow;

use futures::future::join_all;
use sqlx::Connection;
use switchboard_channels::Origin;

use super::MIGRATOR;
use crate::tests::{file_store, inbound, origin, run, topic, Db, Keep};
use crate::*;

#[tokio::test]
async fn a_batch_answers_each_caller_with_its_own_rows() {
    let (_d, store) = file_store(Db::Sqlite).await;
    let o = origin();
    // Queued together before the writer task runs (one thread): one batch of 37 copies
    // of the same script.
    let texts: Vec<String> = (0..37).map(|i| format!("message {i}")).collect();
    let ids = join_all(texts.iter().enumerate().map(|(i, text)| {
        let (store, o) = (&store, &o);
        async move {
            let key = format!("agent:main:k{}", i % 5);
            store
                .accept_message(&inbound(&key, o, text, None), None)
                .await
                .unwrap()
                .unwrap()
                .0
        }
    }))
    .await;
    let mut stored = Vec::new();
    for k in 0..5 {
        let s = store
            .ensure_session(&format!("agent:main:k{k}"), "main", None)
            .await
            .unwrap();
        let id = format!("run-{k}");
        store
            .create_run(&run(&id, &format!("agent:main:k{k}"), &s.id, &o))
            .await
            .unwrap();
        stored.extend(
            store
                .start_run(
                    &id,
                    &format!("agent:main:k{k}"),
                    &s.id,
                    None,
                    Some(Claim::All),
                )
                .await
                .unwrap()
                .unwrap()
                .claimed,
        );
    }
    assert_eq!(stored.len(), 37);
    for item in stored {
        let i = ids
            .iter()
            .position(|id| *id == item.id)
            .expect("an id we got");
        assert_eq!(
            item.text, texts[i],
            "inbox id {} went to another caller",
            item.id
        );
    }
}

#[tokio::test]
async fn a_failing_script_in_a_batch_fails_alone() {
    let (_d, store) = file_store(Db::Sqlite).await;
    let o = origin();
    let key = "agent:main:main";
    let s = store.ensure_session(key, "main", Some(&o)).await.unwrap();
    store
        .create_run(&run("taken", key, &s.id, &o))
        .await
        .unwrap();
    let ids = ["a", "b", "taken", "c", "d"];
    let results = join_all(ids.iter().map(|id| {
        let new = run(id, key, &s.id, &o);
        let (store, o) = (&store, &o);
        async move {
            store
                .accept_message(&inbound(key, o, id, None), Some(&new))
                .await
        }
    }))
    .await;
    for (id, r) in ids.iter().zip(&results) {
        if *id == "taken" {
            assert!(r.is_err(), "a run id used twice fails");
        } else {
            assert!(r.as_ref().unwrap().is_some(), "{id} committed");
            assert!(store.get_run(id).await.unwrap().is_some());
        }
    }
    // The failed one stored nothing: its message is not in the inbox either.
    assert_eq!(store.inbox_len(key).await.unwrap(), 4);
}

/// Catches: migration 0010 leaving the new origin columns empty on rows stored before it
/// (a run queued before an upgrade would send its reply nowhere, a child's announce too).
#[tokio::test]
async fn rows_stored_before_the_origin_columns_deliver_after_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
    let t = topic();
    let json = serde_json::to_string(&t).unwrap();
    {
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let before = sqlx::migrate::Migrator {
            migrations: Cow::Owned(
                MIGRATOR
                    .iter()
                    .filter(|m| m.version < 10)
                    .cloned()
                    .collect(),
            ),
            ..sqlx::migrate::Migrator::DEFAULT
        };
        before.run(&mut conn).await.unwrap();
        for sql in [
            "INSERT INTO sessions (id, key, agent_id, status, created_at, updated_at)
                 VALUES ('s1', 'agent:main:main', 'main', 'active', 0, 0)",
            "INSERT INTO inbox (session_key, origin, sender_id, text, created_at)
                 VALUES ('agent:main:main', ?1, 'ann', 'hello', 0)",
            "INSERT INTO runs (id, session_key, session_id, agent_id, lane, claim, status, origin, created_at)
                 VALUES ('r1', 'agent:main:main', 's1', 'main', 'main', 'all', 'queued', ?1, 0)",
            "INSERT INTO subagent_runs (run_id, child_session_key, requester_session_key,
                     requester_origin, task, agent_id, created_at, ended_at, outcome, announce_state)
                 VALUES ('c1', 'agent:main:subagent:c1', 'agent:main:main', ?1, 'look', 'main',
                     0, 0, 'success', 'pending')",
        ] {
            sqlx::query(sql).bind(&json).execute(&mut conn).await.unwrap();
        }
        conn.close().await.unwrap();
    }
    let store = Store::open(&url).await.unwrap();
    store
        .start_run("r1", "agent:main:main", "s1", None, Some(Claim::All))
        .await
        .unwrap();
    let end = RunEnd {
        deliver: Some("answer".into()),
        ..RunEnd::bare(RunStatus::Succeeded, None)
    };
    store.finish_run("r1", &end).await.unwrap();
    let message = AnnounceMessage {
        text: "Status: success",
        footer: "Stats: runtime 1s",
    };
    store
        .complete_announce("c1", Some(message), false, None)
        .await
        .unwrap();
    let due: Vec<(String, Origin)> = store
        .due_outbox(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.key, r.origin))
        .collect();
    assert_eq!(
        due,
        [
            ("run:r1:reply".to_string(), t.clone()),
            ("announce:c1".to_string(), t.clone())
        ]
    );
    assert_eq!(
        store.outbox_chat_for_tests("run:r1:reply").await.unwrap(),
        (
            "telegram".into(),
            "-5".into(),
            Some("3".into()),
            "answer".into(),
            None
        )
    );
    assert_eq!(
        store.outbox_chat_for_tests("announce:c1").await.unwrap(),
        (
            "telegram".into(),
            "-5".into(),
            Some("3".into()),
            "Status: success".into(),
            Some("Stats: runtime 1s".into())
        )
    );
}

mod checkpoints;
mod params;

/// Catches: the group-commit writer waiting for another process's write lock inside
/// SQLite's busy handler, which would hold the runtime's thread (here its only one) for as
/// long as the lock is held; or giving up at once. The lock is an operator's `sqlite3`
/// shell in a transaction: the write waits, the runtime keeps running other tasks, and the
/// write lands once the lock is gone.
#[tokio::test(flavor = "current_thread")]
async fn a_write_waits_for_another_processs_lock_without_holding_the_runtime() {
    let (dir, store) = file_store(Db::Sqlite).await;
    let Keep::Dir(dir) = &dir else { unreachable!() };
    let other = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();

    let write = tokio::spawn({
        let store = store.clone();
        async move { store.ensure_session("agent:main:busy", "main", None).await }
    });
    // 200 ms of 10 ms ticks on the one thread the write also runs on; held in a busy
    // handler (the store's is 10 s), they would take seconds.
    let started = std::time::Instant::now();
    for _ in 0..20 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "the waiting write held the runtime's thread for {:?}",
        started.elapsed()
    );
    assert!(!write.is_finished(), "a write went through another's lock");

    other.execute_batch("COMMIT").unwrap();
    let session = tokio::time::timeout(std::time::Duration::from_secs(5), write)
        .await
        .expect("the write still waits after the lock is gone")
        .unwrap()
        .unwrap();
    assert_eq!(session.key, "agent:main:busy");
}

/// Catches: migration 0017 leaving a job the `cron` tool stored before the rule in the
/// agent's main session (a group's job running every time in the owner's DM session), or
/// touching the operator's jobs.
#[tokio::test]
async fn tool_jobs_stored_in_the_main_session_run_isolated_after_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("t.db").display());
    {
        let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
        let before = sqlx::migrate::Migrator {
            migrations: Cow::Owned(
                MIGRATOR
                    .iter()
                    .filter(|m| m.version < 17)
                    .cloned()
                    .collect(),
            ),
            ..sqlx::migrate::Migrator::DEFAULT
        };
        before.run(&mut conn).await.unwrap();
        for (id, source) in [("from-tool", "tool"), ("from-file", "config")] {
            let spec = format!(
                r#"{{"id":"{id}","schedule":{{"every":"1s"}},"message":"m","session":"main","enabled":true}}"#
            );
            sqlx::query(
                "INSERT INTO cron_jobs (id, source, spec, enabled, created_at, updated_at)
                     VALUES (?1, ?2, ?3, 1, 0, 0)",
            )
            .bind(id)
            .bind(source)
            .bind(spec)
            .execute(&mut conn)
            .await
            .unwrap();
        }
        conn.close().await.unwrap();
    }
    let store = Store::open(&url).await.unwrap();
    let session = |id: &'static str| {
        let store = &store;
        async move {
            let job = store
                .cron_job::<serde_json::Value>(id)
                .await
                .unwrap()
                .unwrap();
            job.spec["session"].clone()
        }
    };
    assert_eq!(session("from-tool").await, "isolated");
    assert_eq!(session("from-file").await, "main");
}
