//! The inbound ledger: attempts at an update survive a restart, an offset save forgets
//! those below it, a poisoned update is recorded once.

use super::*;

/// Catches: attempts at an update not surviving a restart (counted only in memory), an
/// offset save leaving the attempts behind, or a poisoned update not recorded.
pub(super) async fn the_inbound_ledger_counts_attempts_and_records_poisoned_updates(db: Db) {
    let (keep, store) = file_store(db).await;
    assert_eq!(store.begin_inbound_attempt("telegram", 5).await.unwrap(), 1);
    assert_eq!(store.begin_inbound_attempt("telegram", 5).await.unwrap(), 2);
    store.uncount_inbound_attempt("telegram", 5).await.unwrap();
    assert_eq!(store.begin_inbound_attempt("telegram", 5).await.unwrap(), 2);
    assert_eq!(store.begin_inbound_attempt("telegram", 6).await.unwrap(), 1);
    store.close().await;
    let store = reopen(&keep).await;
    assert_eq!(store.inbound_attempts("telegram", 5).await.unwrap(), 2);
    store
        .save_inbound_offset("telegram", "offset", 6)
        .await
        .unwrap();
    assert_eq!(store.inbound_attempts("telegram", 5).await.unwrap(), 0);
    assert_eq!(store.inbound_attempts("telegram", 6).await.unwrap(), 1);
    let poisoned = PoisonedUpdate {
        channel: "telegram".into(),
        update_id: 6,
        attempts: 3,
        reason: "not taken".into(),
        summary: "message 1 in chat 2 from 3".into(),
        payload: "{}".into(),
        poisoned_at: 1,
    };
    store.poison_inbound(&poisoned).await.unwrap();
    store.poison_inbound(&poisoned).await.unwrap();
    assert_eq!(store.inbound_attempts("telegram", 6).await.unwrap(), 0);
    assert_eq!(
        store.poisoned_updates("telegram").await.unwrap(),
        vec![poisoned]
    );
    assert_eq!(
        store.poisoned_counts().await.unwrap(),
        vec![("telegram".to_string(), 1)]
    );
}
