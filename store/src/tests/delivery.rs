//! What the run-end and announce scripts write to the outbox: the chat of the row as
//! columns (bound from Rust when the origin was stored, never read from its JSON by SQL),
//! the announce's footer apart from its text, and rows stored before migration 0010.

use super::*;

/// Catches: an announce whose `Stats:` line is left inside its text for the adapters to
/// find by prefix (no footer column), and run-end or announce rows without their chat
/// (the outbox's per-chat order would not hold them behind an earlier row of the chat).
pub(super) async fn script_rows_name_their_chat_and_footer(db: Db) {
    let (_d, store, _, s) = chat_store(db).await;
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
        store.outbox_chat_for_tests("run:r1:reply").await.unwrap(),
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
        store.outbox_chat_for_tests("announce:c1").await.unwrap(),
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
