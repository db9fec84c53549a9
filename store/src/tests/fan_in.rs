//! Fan-in: the announce recorded in the requester's transcript in the transaction that
//! completes it — once, for a sent and for a skipped announce, and only in the requester's
//! active session.

use super::*;

/// Catches: the announce not reaching the requester's transcript, reaching it twice when
/// the completion is repeated (a restart between the commit and the wake-up), or reaching
/// it without the announce moving (outside the announce's transaction).
pub(super) async fn the_announce_is_recorded_once_in_the_requesters_transcript(db: Db) {
    let (_d, store, o) = requester_store(db).await;
    let requester = store
        .active_session("agent:main:main")
        .await
        .unwrap()
        .expect("requester");
    for id in ["c1", "c2"] {
        spawned(&store, id, &o).await;
        store
            .finish_run(id, &RunEnd::bare(RunStatus::Succeeded, None))
            .await
            .unwrap();
    }
    let fan = |id: &str| format!("[sub-agent result: from child run {id}] Status: success");
    for _ in 0..2 {
        store
            .complete_announce_fan_in("c1", Some(ok_announce()), false, None, Some(&fan("c1")))
            .await
            .unwrap();
        // A skipped announce is recorded too.
        store
            .complete_announce_fan_in("c2", None, false, None, Some(&fan("c2")))
            .await
            .unwrap();
    }
    let t = store.transcript(&requester.id).await.unwrap();
    let got: Vec<(Role, &str)> = t.iter().map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(
        got,
        vec![
            (Role::User, fan("c1").as_str()),
            (Role::User, fan("c2").as_str())
        ]
    );
    assert_eq!(store.due_outbox(10).await.unwrap().len(), 1);

    // Without fan-in text (or once the announce is done) nothing is recorded.
    spawned(&store, "c3", &o).await;
    store
        .complete_announce("c3", Some(ok_announce()), false, None)
        .await
        .unwrap();
    assert_eq!(store.transcript(&requester.id).await.unwrap().len(), 2);
}
