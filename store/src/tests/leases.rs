//! Named leases: acquire, renew, release; a live holder blocks another owner; expiry hands
//! the lease over and raises the fence; a renewal after the loss fails; two processes
//! acquiring at once never both win.

use std::time::Duration;

use super::*;

/// Long enough that no test outlives it.
const LIVE: Duration = Duration::from_secs(600);
/// Expired by the time the test looks again (it waits past it).
const SHORT: Duration = Duration::from_millis(1);

/// Waits until a lease of [`SHORT`] written now has expired on any clock the store uses.
async fn past_short_expiry() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

pub(super) async fn a_lease_is_held_renewed_released_and_blocks_other_owners(db: Db) {
    let (_db, store) = file_store(db).await;
    assert_eq!(store.leases().await.unwrap(), vec![]);

    let a = store
        .acquire_lease("gateway", "a", LIVE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (a.name.as_str(), a.owner.as_str(), a.fence),
        ("gateway", "a", 1)
    );
    assert!(a.acquired_at <= a.renewed_at && a.renewed_at < a.expires_at);
    assert_eq!(store.leases().await.unwrap(), vec![a.clone()]);

    // Another owner gets nothing while `a` holds it; `a` acquiring again renews.
    assert_eq!(
        store.acquire_lease("gateway", "b", LIVE).await.unwrap(),
        None
    );
    let again = store
        .acquire_lease("gateway", "a", LIVE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((again.fence, again.acquired_at), (1, a.acquired_at));
    assert!(store.renew_lease("gateway", "a", 1, LIVE).await.unwrap());
    assert!(
        !store.renew_lease("gateway", "b", 1, LIVE).await.unwrap(),
        "not b's"
    );
    assert!(
        !store.renew_lease("gateway", "a", 2, LIVE).await.unwrap(),
        "not that fence"
    );

    // Another name is another lease.
    let cron = store
        .acquire_lease("cron", "b", LIVE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((cron.owner.as_str(), cron.fence), ("b", 1));

    // A release by someone else does nothing; by the holder it frees the lease at once.
    store.release_lease("gateway", "b").await.unwrap();
    assert_eq!(
        store.acquire_lease("gateway", "b", LIVE).await.unwrap(),
        None
    );
    store.release_lease("gateway", "a").await.unwrap();
    assert!(
        !store.renew_lease("gateway", "a", 1, LIVE).await.unwrap(),
        "released"
    );
    let b = store
        .acquire_lease("gateway", "b", LIVE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (b.owner.as_str(), b.fence),
        ("b", 2),
        "a new holder, a new fence"
    );
    let names: Vec<_> = store
        .leases()
        .await
        .unwrap()
        .into_iter()
        .map(|l| (l.name, l.owner, l.fence))
        .collect();
    assert_eq!(
        names,
        vec![
            ("cron".into(), "b".into(), 1),
            ("gateway".into(), "b".into(), 2)
        ]
    );
}

pub(super) async fn an_expired_lease_goes_to_the_next_owner_with_a_higher_fence(db: Db) {
    let (_db, store) = file_store(db).await;
    let a = store
        .acquire_lease("gateway", "a", SHORT)
        .await
        .unwrap()
        .unwrap();
    past_short_expiry().await;
    // Expired: `a` can no longer renew, and `b` takes it.
    assert!(!store
        .renew_lease("gateway", "a", a.fence, LIVE)
        .await
        .unwrap());
    let b = store
        .acquire_lease("gateway", "b", LIVE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((b.owner.as_str(), b.fence), ("b", a.fence + 1));
    assert!(b.acquired_at > a.acquired_at);
    // `a` lost it for good: no renewal, no acquisition while `b` lives.
    assert!(!store
        .renew_lease("gateway", "a", a.fence, LIVE)
        .await
        .unwrap());
    assert_eq!(
        store.acquire_lease("gateway", "a", LIVE).await.unwrap(),
        None
    );
    assert!(store
        .renew_lease("gateway", "b", b.fence, LIVE)
        .await
        .unwrap());
    // And back: each change of holder raises the fence.
    store.release_lease("gateway", "b").await.unwrap();
    let a2 = store
        .acquire_lease("gateway", "a", LIVE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a2.fence, b.fence + 1);
}

/// Two processes (two pools on one database) acquire the same free or expired lease at the
/// same moment, many times over: exactly one wins each time.
pub(super) async fn two_processes_acquiring_at_once_never_both_win(db: Db) {
    let (keep, one) = file_store(db).await;
    let two = reopen(&keep).await;
    for round in 0..30 {
        let name = format!("lease-{round}");
        // Even rounds find no row (both insert), odd rounds an expired holder's (both update).
        let expired = round % 2 == 1;
        if expired {
            one.acquire_lease(&name, "old", SHORT)
                .await
                .unwrap()
                .unwrap();
            past_short_expiry().await;
        }
        let (owner_a, owner_b) = (format!("a{round}"), format!("b{round}"));
        let (a, b) = tokio::join!(
            one.acquire_lease(&name, &owner_a, LIVE),
            two.acquire_lease(&name, &owner_b, LIVE),
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(
            a.is_some() != b.is_some(),
            "round {round}: exactly one wins, got {a:?} and {b:?}"
        );
        let won = a.or(b).unwrap();
        assert_eq!(won.fence, if expired { 2 } else { 1 }, "round {round}");
    }
}

/// Telegram's offset moves under a fence: while the lease is the writer's, and never once
/// another owner took it (the stale holder's write changes nothing).
pub(super) async fn a_fenced_offset_moves_only_while_the_fence_holds(db: Db) {
    let (_db, store) = file_store(db).await;
    let a = store
        .acquire_lease("gateway", "a", SHORT)
        .await
        .unwrap()
        .unwrap();
    assert!(store
        .save_inbound_offset_fenced("telegram", "offset", 10, &a)
        .await
        .unwrap());
    assert_eq!(
        store.channel_state("telegram", "offset").await.unwrap(),
        Some("10".into())
    );
    past_short_expiry().await;
    let b = store
        .acquire_lease("gateway", "b", LIVE)
        .await
        .unwrap()
        .unwrap();
    assert!(!store
        .save_inbound_offset_fenced("telegram", "offset", 12, &a)
        .await
        .unwrap());
    assert_eq!(
        store.channel_state("telegram", "offset").await.unwrap(),
        Some("10".into()),
        "the stale holder moved nothing"
    );
    assert!(store
        .save_inbound_offset_fenced("telegram", "offset", 11, &b)
        .await
        .unwrap());
    assert_eq!(
        store.channel_state("telegram", "offset").await.unwrap(),
        Some("11".into())
    );
}

/// Shared mode's renewal: the process lease renews every other live lease of its owner
/// with it, and nothing once it has expired; another owner's leases are untouched; a
/// release expires them all at once. Catches: renewing a process's channel or cron lease
/// after its process lease was lost (another process may hold that work by then).
pub(super) async fn a_process_lease_renews_and_releases_everything_its_owner_holds(db: Db) {
    let (_db, store) = file_store(db).await;
    let me = process_lease("a");
    let p = store.acquire_lease(&me, "a", LIVE).await.unwrap().unwrap();
    let ten_s = Duration::from_secs(10);
    let cron = store
        .acquire_lease("cron", "a", ten_s)
        .await
        .unwrap()
        .unwrap();
    let other = store
        .acquire_lease("channel:x", "b", ten_s)
        .await
        .unwrap()
        .unwrap();
    assert!(store.renew_process("a", p.fence, LIVE).await.unwrap());
    let by_name =
        |leases: Vec<Lease>, name: &str| leases.into_iter().find(|l| l.name == name).unwrap();
    let leases = store.leases().await.unwrap();
    assert!(
        by_name(leases.clone(), "cron").expires_at > cron.expires_at + 500_000,
        "renewed with the process"
    );
    assert_eq!(by_name(leases.clone(), "cron").fence, cron.fence);
    assert_eq!(
        by_name(leases, "channel:x").expires_at,
        other.expires_at,
        "not a's"
    );
    assert!(
        !store.renew_process("a", p.fence + 1, LIVE).await.unwrap(),
        "not that fence"
    );

    // Released: everything of a's expires at once; a renewal then fails.
    store.release_process("a").await.unwrap();
    // (The database's milliseconds are rounded, the process's truncated: allow one.)
    let now = crate::now_ms() + 1;
    for l in store.leases().await.unwrap() {
        assert_eq!(l.expires_at < now, l.owner == "a", "{l:?} now {now}");
    }
    assert!(!store.renew_process("a", p.fence, LIVE).await.unwrap());
    assert!(store
        .acquire_lease("cron", "b", LIVE)
        .await
        .unwrap()
        .is_some());

    // A stopped process's lease is forgotten once it has been expired for a while; a live
    // one and other names stay.
    assert_eq!(
        store.forget_dead_processes(LIVE).await.unwrap(),
        0,
        "not a while yet"
    );
    past_short_expiry().await;
    assert_eq!(store.forget_dead_processes(SHORT).await.unwrap(), 1);
    assert!(store.leases().await.unwrap().iter().all(|l| l.name != me));

    // An expired process lease renews nothing.
    let q = store
        .acquire_lease(&process_lease("c"), "c", SHORT)
        .await
        .unwrap()
        .unwrap();
    let c = store
        .acquire_lease("channel:y", "c", LIVE)
        .await
        .unwrap()
        .unwrap();
    past_short_expiry().await;
    assert!(!store.renew_process("c", q.fence, LIVE).await.unwrap());
    let y = by_name(store.leases().await.unwrap(), "channel:y");
    assert_eq!(y.renewed_at, c.renewed_at, "not renewed");
}
