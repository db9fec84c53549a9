//! The outbox rows whose file copy is still needed, read back on each engine: pending and
//! sending rows always, a delivered web chat row (its download) only while it is recent,
//! and a row's file found by its key.

use super::*;
use switchboard_channels::{FileKind, OutboundFile};

fn file(id: &str) -> OutboundFile {
    OutboundFile {
        path: format!("/state/media/out/{id}/report.pdf").into(),
        name: "report.pdf".into(),
        mime: "application/pdf".into(),
        kind: FileKind::Document,
        size: 3,
    }
}

fn on(channel: &str) -> Origin {
    Origin {
        channel: channel.into(),
        ..origin()
    }
}

/// Catches: a copy removed while its row still waits to be sent, a web chat download
/// removed before `media.keepDays` or kept past it, another channel's delivered copy kept,
/// and a row's file not found by its key (the history's download button).
pub(super) async fn copies_are_held_while_pending_and_web_chat_ones_while_recent(db: Db) {
    let (_d, store) = file_store(db).await;
    for (key, channel) in [("tg", "telegram"), ("wc", "webchat"), ("wait", "telegram")] {
        let f = file(key);
        assert!(store
            .enqueue_outbox_with_file(key, &on(channel), "", &f)
            .await
            .unwrap());
    }
    for row in store.due_outbox(10).await.unwrap() {
        if row.key != "wait" {
            assert!(store.claim_outbox(row.id).await.unwrap());
            store.mark_outbox_sent(row.id).await.unwrap();
        }
    }
    let held = |list: Vec<String>| -> Vec<String> {
        let mut ids: Vec<String> = list
            .iter()
            .map(|json| {
                let f: OutboundFile = serde_json::from_str(json).unwrap();
                f.path
                    .parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        ids.sort();
        ids
    };
    let recent = store
        .outbox_files_held("webchat", now_ms() - 60_000)
        .await
        .unwrap();
    assert_eq!(held(recent), ["wait", "wc"]);
    let expired = store
        .outbox_files_held("webchat", now_ms() + 60_000)
        .await
        .unwrap();
    assert_eq!(held(expired), ["wait"]);

    let (channel, json) = store.outbox_file("wc").await.unwrap().unwrap();
    assert_eq!(channel, "webchat");
    assert_eq!(
        serde_json::from_str::<OutboundFile>(&json).unwrap(),
        file("wc")
    );
    assert_eq!(store.outbox_file("nothing").await.unwrap(), None);
}
