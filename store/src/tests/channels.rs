//! Pairing: a stranger's code, its reminders, approval, rejection, revocation, expiry and
//! the per-channel cap; inbound dedupe.

use super::*;
use crate::channels::{MAX_PENDING, PAIRING_TTL_MS};

pub(super) async fn pairing_flow_and_dedupe(db: Db) {
    let (_db, store) = file_store(db).await;
    let Pairing::Pending { code, notify: true } = store
        .pairing_for("telegram", "42", Some("@ann"))
        .await
        .unwrap()
    else {
        panic!("first contact is pending and notified")
    };
    assert_eq!(
        store.pairing_for("telegram", "42", None).await.unwrap(),
        Pairing::Pending {
            code: code.clone(),
            notify: false
        }
    );
    assert_eq!(
        store.approve_pairing("telegram", "NOPE").await.unwrap(),
        None
    );
    let approved = store
        .approve_pairing("telegram", &code.to_lowercase())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (approved.sender_id.as_str(), approved.status.as_str()),
        ("42", "approved")
    );
    assert_eq!(
        store.pairing_for("telegram", "42", None).await.unwrap(),
        Pairing::Approved
    );
    assert!(store.mark_inbound_seen("telegram", "1:7").await.unwrap());
    assert!(store
        .list_pairings()
        .await
        .unwrap()
        .iter()
        .any(|p| p.sender_id == "42"));
    assert!(!store.mark_inbound_seen("telegram", "1:7").await.unwrap());
    store
        .set_channel_state("telegram", "offset", "12")
        .await
        .unwrap();
    store
        .set_channel_state("telegram", "offset", "13")
        .await
        .unwrap();
    assert_eq!(
        store
            .channel_state("telegram", "offset")
            .await
            .unwrap()
            .as_deref(),
        Some("13")
    );
}

/// Catches: a rejected sender getting a fresh code at once (the rejection undone by
/// writing again), or a revoked sender still let in.
pub(super) async fn rejected_senders_wait_and_revoked_senders_start_over(db: Db) {
    let (_db, store) = file_store(db).await;
    let Pairing::Pending { code, .. } = store.pairing_for("telegram", "7", None).await.unwrap()
    else {
        panic!("pending")
    };
    let rejected = store
        .reject_pairing("telegram", &code)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rejected.status, "rejected");
    assert_eq!(
        store.pairing_for("telegram", "7", None).await.unwrap(),
        Pairing::Rejected
    );
    assert_eq!(
        store.approve_pairing("telegram", &code).await.unwrap(),
        None,
        "no longer pending"
    );
    let later = now_ms() + PAIRING_TTL_MS + 1;
    assert!(matches!(
        store
            .pairing_at("telegram", "7", None, later)
            .await
            .unwrap(),
        Pairing::Pending { notify: true, .. }
    ));

    let Pairing::Pending { code, .. } = store.pairing_for("discord", "8", None).await.unwrap()
    else {
        panic!("pending")
    };
    store
        .approve_pairing("discord", &code)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.revoke_pairing("discord", "9").await.unwrap(), None);
    let revoked = store.revoke_pairing("discord", "8").await.unwrap().unwrap();
    assert_eq!(revoked.sender_id, "8");
    assert!(matches!(
        store.pairing_for("discord", "8", None).await.unwrap(),
        Pairing::Pending { notify: true, .. }
    ));
}

/// Requests expire after an hour (the sender gets a new code), and a channel holds at
/// most `MAX_PENDING` of them: the table does not grow with every stranger.
pub(super) async fn pairing_requests_expire_and_are_capped_per_channel(db: Db) {
    let (_db, store) = file_store(db).await;
    let t0 = now_ms();
    let Pairing::Pending { code: old, .. } =
        store.pairing_at("telegram", "1", None, t0).await.unwrap()
    else {
        panic!("pending")
    };
    for i in 2..=MAX_PENDING {
        let p = store
            .pairing_at("telegram", &i.to_string(), None, t0)
            .await
            .unwrap();
        assert!(
            matches!(p, Pairing::Pending { notify: true, .. }),
            "{i}: {p:?}"
        );
    }
    assert_eq!(
        store
            .pairing_at("telegram", "stranger", None, t0)
            .await
            .unwrap(),
        Pairing::Full
    );
    // Other channels have their own cap.
    assert!(matches!(
        store
            .pairing_at("discord", "stranger", None, t0)
            .await
            .unwrap(),
        Pairing::Pending { .. }
    ));
    // An hour later every request has expired: room again, and a new code.
    let later = t0 + PAIRING_TTL_MS + 1;
    let Pairing::Pending {
        code: new,
        notify: true,
    } = store
        .pairing_at("telegram", "1", None, later)
        .await
        .unwrap()
    else {
        panic!("a new request")
    };
    assert_ne!(old, new);
    let count = store
        .count_for_tests("SELECT COUNT(*) FROM pairings WHERE channel = 'telegram'")
        .await
        .unwrap();
    assert_eq!(count, 1, "expired requests are deleted");
    // An expired code cannot be approved.
    assert_eq!(store.approve_pairing("telegram", &old).await.unwrap(), None);
}
