//! The outbox's order and delivery state: a chat's rows leave in order (a later row waits
//! while an earlier one of its chat is sent or waits out a retry), the next wake-up is
//! the time of a chat's head, delivered parts survive a crash.

use super::*;

fn chat(chat: &str, thread: Option<&str>) -> Origin {
    Origin {
        channel: "telegram".into(),
        account: None,
        chat_id: chat.into(),
        thread_id: thread.map(str::to_string),
        kind: ChatKind::Group,
        reply_handle: None,
    }
}

async fn due_keys(store: &Store) -> Vec<String> {
    store
        .due_outbox(100)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.key)
        .collect()
}

async fn id_of(store: &Store, key: &str) -> i64 {
    store
        .due_outbox(100)
        .await
        .unwrap()
        .into_iter()
        .find(|r| r.key == key)
        .map(|r| r.id)
        .unwrap()
}

/// Catches: a later row of a chat sent while an earlier row of the same chat waits out
/// its retry backoff (an announce landing after later replies), and a row that failed
/// for good holding its chat back forever.
pub(super) async fn a_chat_waits_for_its_earlier_pending_row(db: Db) {
    let (_db, store) = file_store(db).await;
    let a = chat("-1", None);
    let topic = chat("-1", Some("7"));
    store.enqueue_outbox("a1", &a, "one").await.unwrap();
    store.enqueue_outbox("t1", &topic, "topic").await.unwrap();
    store.enqueue_outbox("a2", &a, "two").await.unwrap();
    store
        .enqueue_outbox("b1", &chat("-2", None), "other")
        .await
        .unwrap();
    assert_eq!(due_keys(&store).await, ["a1", "t1", "a2", "b1"]);

    // a1 fails and waits a minute: a2 waits with it; the topic and chat -2 do not.
    let a1 = id_of(&store, "a1").await;
    assert!(store.claim_outbox(a1).await.unwrap());
    assert_eq!(
        due_keys(&store).await,
        ["t1", "b1"],
        "a2 waits while a1 is sent"
    );
    let later = now_ms() + 60_000;
    store
        .mark_outbox_failed(a1, "503", Some(later))
        .await
        .unwrap();
    assert_eq!(due_keys(&store).await, ["t1", "b1"]);

    // Given up for good: the chat goes on.
    store.mark_outbox_failed(a1, "refused", None).await.unwrap();
    assert_eq!(due_keys(&store).await, ["t1", "a2", "b1"]);
}

/// Catches: the worker's next wake-up taken from a row held back by an earlier one of
/// its chat (due long ago), which made it poll every few milliseconds until the
/// earlier row's retry.
pub(super) async fn the_next_due_time_is_the_held_back_chats_head(db: Db) {
    let (_db, store) = file_store(db).await;
    let a = chat("-1", None);
    store.enqueue_outbox("a1", &a, "one").await.unwrap();
    store.enqueue_outbox("a2", &a, "two").await.unwrap();
    let a1 = id_of(&store, "a1").await;
    assert!(store.claim_outbox(a1).await.unwrap());
    assert_eq!(
        store.next_outbox_due().await.unwrap(),
        None,
        "a1 is being sent"
    );
    let later = now_ms() + 60_000;
    store
        .mark_outbox_failed(a1, "503", Some(later))
        .await
        .unwrap();
    assert_eq!(store.next_outbox_due().await.unwrap(), Some(later));
}

/// Catches: delivered parts of a split message kept only in memory (lost with the
/// process), and rows inserted by the run-end and announce scripts (which copy a stored
/// origin and its chat columns) missing from their chat's order. (The scripts
/// themselves: `store::tests::script_rows_name_their_chat_and_footer`.)
pub(super) async fn parts_sent_survive_and_copied_origins_get_their_chat(db: Db) {
    let (_db, store) = file_store(db).await;
    let a = chat("-1", Some("3"));
    let json = to_json(&a).unwrap();
    store
        .execute_for_tests(&format!(
            "INSERT INTO outbox (key, channel, chat_id, thread_id, origin, text, next_attempt_at,
                 created_at)
             VALUES ('r1', 'telegram', '-1', '3', '{json}', 'reply', 0, 0)"
        ))
        .await
        .unwrap();
    store.enqueue_outbox("r2", &a, "after").await.unwrap();
    let row = store.due_outbox(10).await.unwrap().remove(0);
    assert_eq!((row.key.as_str(), row.parts_sent), ("r1", 0));
    assert!(store.claim_outbox(row.id).await.unwrap());
    assert_eq!(
        due_keys(&store).await,
        Vec::<String>::new(),
        "r2 waits for r1"
    );
    store.mark_outbox_progress(row.id, 2).await.unwrap();
    // A crash: at the next start the row is pending again, two parts delivered.
    assert_eq!(store.reset_sending_outbox().await.unwrap(), 1);
    let row = store.due_outbox(10).await.unwrap().remove(0);
    assert_eq!(
        (row.key.as_str(), row.parts_sent, row.attempts),
        ("r1", 2, 1)
    );
    assert_eq!(store.retry_chat_now("telegram", "-1").await.unwrap(), 0);
}
