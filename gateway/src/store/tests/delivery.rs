//! What the run-end and announce scripts write to the outbox: the chat of the row as
//! columns (bound from Rust when the origin was stored, never read from its JSON by SQL),
//! the announce's footer apart from its text, and rows stored before migration 0010.

use std::borrow::Cow;

use sqlx::Connection;

use super::*;

/// A forum topic of a Telegram group.
fn topic() -> Origin {
    Origin {
        channel: "telegram".into(),
        account: None,
        chat_id: "-5".into(),
        thread_id: Some("3".into()),
        kind: ChatKind::Group,
        reply_handle: None,
    }
}

/// The outbox row `key`: (channel, chat_id, thread_id, text, footer).
async fn outbox_row(
    store: &Store,
    key: &str,
) -> (String, String, Option<String>, String, Option<String>) {
    let r = sqlx::query_as(
        "SELECT channel, chat_id, thread_id, text, footer FROM outbox WHERE key = ?",
    )
    .bind(key)
    .fetch_one(&mut *store.reader().await)
    .await
    .unwrap();
    r
}

/// Catches: an announce whose `Stats:` line is left inside its text for the adapters to
/// find by prefix (no footer column), and run-end or announce rows without their chat
/// (the outbox's per-chat order would not hold them behind an earlier row of the chat).
#[tokio::test]
async fn script_rows_name_their_chat_and_footer() {
    let (_d, store, _, s) = chat_store().await;
    let t = topic();
    store
        .accept_message(
            &inbound(KEY, &t, "hi", None),
            Some(&run("r1", KEY, &s.id, &t)),
        )
        .await
        .unwrap();
    store
        .start_run("r1", KEY, &s.id, None, Some(Claim::All))
        .await
        .unwrap();
    let end = RunEnd {
        deliver: Some("answer".into()),
        ..RunEnd::bare(RunStatus::Succeeded, None)
    };
    store.finish_run("r1", &end).await.unwrap();
    assert_eq!(
        outbox_row(&store, "run:r1:reply").await,
        (
            "telegram".into(),
            "-5".into(),
            Some("3".into()),
            "answer".into(),
            None
        )
    );

    store
        .ensure_session("agent:main:main", "main", Some(&t))
        .await
        .unwrap();
    spawned(&store, "c1", &t).await;
    store
        .finish_run("c1", &RunEnd::bare(RunStatus::Succeeded, None))
        .await
        .unwrap();
    let message = AnnounceMessage {
        text: "Status: success\nResult: done\nNotes: none",
        footer: "Stats: runtime 1s",
    };
    assert!(store
        .complete_announce("c1", Some(message), false, None)
        .await
        .unwrap());
    assert_eq!(
        outbox_row(&store, "announce:c1").await,
        (
            "telegram".into(),
            "-5".into(),
            Some("3".into()),
            message.text.into(),
            Some(message.footer.into())
        )
    );
    let due = store.due_outbox(10).await.unwrap();
    let announce = due.iter().find(|r| r.key == "announce:c1").expect("due");
    assert_eq!(
        (announce.text.as_str(), announce.footer.as_deref()),
        (message.text, Some(message.footer))
    );
    // The reply heads the topic: the announce waits while it is being sent.
    let reply = due.iter().find(|r| r.key == "run:r1:reply").expect("due");
    assert!(store.claim_outbox(reply.id).await.unwrap());
    let keys: Vec<String> = store
        .due_outbox(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(keys, Vec::<String>::new());
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
        outbox_row(&store, "run:r1:reply").await,
        (
            "telegram".into(),
            "-5".into(),
            Some("3".into()),
            "answer".into(),
            None
        )
    );
    assert_eq!(
        outbox_row(&store, "announce:c1").await,
        (
            "telegram".into(),
            "-5".into(),
            Some("3".into()),
            "Status: success".into(),
            Some("Stats: runtime 1s".into())
        )
    );
}
