//! Compactions: committed whole in one insert, the furthest one read, the messages kept.

use super::*;

fn compaction(through_seq: i64, summary: &str) -> NewCompaction {
    NewCompaction {
        through_seq,
        summary: summary.into(),
        replaced: 2,
        tokens_before: 1000,
        tokens_after: 20,
    }
}

/// Catches: a compaction that deletes or hides the messages it summarizes (the API and
/// `/subagents log` read them), a run reading an older compaction than the furthest, or a
/// repeated compaction (two raced) failing or stored twice.
pub(super) async fn a_compaction_is_read_by_the_furthest_and_keeps_the_messages(db: Db) {
    let (_d, store, _o, s) = chat_store(db).await;
    assert_eq!(store.latest_compaction(&s.id).await.unwrap(), None);
    let mut seqs = Vec::new();
    for i in 0..4 {
        let m = NewMessage::user(format!("m{i}"));
        seqs.push(store.append_message(&s.id, None, &m).await.unwrap());
    }
    store
        .add_compaction(&s.id, &compaction(seqs[1], "first two"))
        .await
        .unwrap();
    store
        .add_compaction(&s.id, &compaction(seqs[2], "first three"))
        .await
        .unwrap();
    // The same marker again: ignored, not an error.
    store
        .add_compaction(&s.id, &compaction(seqs[2], "again"))
        .await
        .unwrap();
    let latest = store.latest_compaction(&s.id).await.unwrap().unwrap();
    assert_eq!(
        (
            latest.session_id.as_str(),
            latest.through_seq,
            latest.summary.as_str(),
            latest.replaced,
            latest.tokens_before,
            latest.tokens_after,
        ),
        (s.id.as_str(), seqs[2], "first three", 2, 1000, 20)
    );
    let all: Vec<(i64, String)> = store
        .compactions(&s.id)
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.through_seq, c.summary))
        .collect();
    assert_eq!(
        all,
        vec![
            (seqs[1], "first two".to_string()),
            (seqs[2], "first three".to_string())
        ]
    );
    assert_eq!(store.transcript(&s.id).await.unwrap().len(), 4);
}
