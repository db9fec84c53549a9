//! The standby and the keeper on the SQLite engine's in-memory leases (the same answers as
//! PostgreSQL's; the two-process behaviour is proven end to end in `tests/suite/postgres_standby.rs`),
//! on tokio's paused clock.

use super::*;

const TIMEOUT: Duration = Duration::from_secs(3);

async fn store() -> Store {
    Store::open_in_memory().await.unwrap()
}

/// A standby waits while another process holds the lease, takes it once released, and
/// stops at once (holding nothing) when shut down while waiting.
#[tokio::test(start_paused = true)]
async fn a_standby_waits_for_the_holder_and_stops_on_shutdown() {
    let store = store().await;
    let held = store
        .acquire_lease(GATEWAY_LEASE, "a", Duration::from_secs(600))
        .await
        .unwrap()
        .unwrap();
    let shutdown = CancellationToken::new();
    let waiting = tokio::spawn({
        let (store, shutdown) = (store.clone(), shutdown.clone());
        async move { acquire(&store, "b", TIMEOUT, &shutdown).await }
    });
    tokio::time::sleep(TIMEOUT * 5).await;
    assert!(!waiting.is_finished(), "a live holder keeps b waiting");
    store.release_lease(GATEWAY_LEASE, "a").await.unwrap();
    let (lease, _) = waiting.await.unwrap().expect("b takes the released lease");
    assert_eq!((lease.owner.as_str(), lease.fence), ("b", held.fence + 1));

    let stopped = acquire(&store, "c", TIMEOUT, &{
        let t = CancellationToken::new();
        t.cancel();
        t
    })
    .await;
    assert!(stopped.is_none(), "shut down while standing by");
    shutdown.cancel();
}

/// The keeper keeps the lease while it is this process's, and returns without firing
/// `lost` when cancelled.
#[tokio::test(start_paused = true)]
async fn the_keeper_renews_until_cancelled() {
    let store = store().await;
    let (lease, since) = acquire(&store, "a", TIMEOUT, &CancellationToken::new())
        .await
        .unwrap();
    let (cancel, lost) = (CancellationToken::new(), CancellationToken::new());
    let tasks = TaskTracker::new();
    let keeper = spawn_keeper(
        &tasks,
        store.clone(),
        lease.clone(),
        since,
        TIMEOUT,
        cancel.clone(),
        lost.clone(),
    );
    tokio::time::sleep(TIMEOUT * 10).await;
    assert!(!lost.is_cancelled());
    assert!(store
        .renew_lease(GATEWAY_LEASE, "a", lease.fence, TIMEOUT)
        .await
        .unwrap());
    cancel.cancel();
    keeper.await.unwrap();
    assert!(!lost.is_cancelled(), "a graceful stop is not a loss");
}

/// When another process takes the lease, the keeper's next renewal fails and `lost` fires.
#[tokio::test(start_paused = true)]
async fn the_keeper_fires_lost_when_another_process_takes_the_lease() {
    let store = store().await;
    let (lease, since) = acquire(&store, "a", TIMEOUT, &CancellationToken::new())
        .await
        .unwrap();
    let (cancel, lost) = (CancellationToken::new(), CancellationToken::new());
    let tasks = TaskTracker::new();
    let keeper = spawn_keeper(
        &tasks,
        store.clone(),
        lease,
        since,
        TIMEOUT,
        cancel,
        lost.clone(),
    );
    // As if `a` had paused past its expiry and `thief` had taken over meanwhile.
    store.release_lease(GATEWAY_LEASE, "a").await.unwrap();
    store
        .acquire_lease(GATEWAY_LEASE, "thief", Duration::from_secs(600))
        .await
        .unwrap()
        .unwrap();
    lost.cancelled().await;
    keeper.await.unwrap();
}

#[test]
fn owner_ids_name_the_process_and_differ_per_start() {
    let (a, b) = (owner_id(), owner_id());
    assert_ne!(a, b);
    let pid = std::process::id().to_string();
    assert_eq!(a.split(':').nth(1), Some(pid.as_str()), "{a}");
}
