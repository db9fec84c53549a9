//! The lease loop with a fake channel run under the supervisor, as the adapters run one,
//! and two owners on one database: on SQLite's in-memory leases (one store, as within one
//! process) and on PostgreSQL (two stores on one test database, as two processes). Real
//! time: the database's clock decides expiries. Every wait is for an event, with a bound.

use std::sync::Arc;

use async_trait::async_trait;
use switchboard_channels::{
    Channel, ChannelError, DeliveryProgress, InboundSink, Origin, OutboundMessage,
};
use switchboard_testkit::pg::TestDb;
use tokio::sync::watch;

use super::*;
use crate::supervisor::{supervise, Restarts};

/// Longest wait for an expected change.
const WITHIN: Duration = Duration::from_secs(10);
/// The lease timeout of these tests: a look every 500 ms (a loaded machine must not
/// stall a holder past two thirds of it).
const TIMEOUT: Duration = Duration::from_millis(1500);

/// A channel whose inbound side says whether it runs (and how often it was started).
struct Probe {
    running: watch::Sender<bool>,
    starts: std::sync::atomic::AtomicUsize,
}

#[async_trait]
impl Channel for Probe {
    fn id(&self) -> &str {
        "probe"
    }
    fn text_limit(&self) -> usize {
        100
    }
    async fn run(&self, _: InboundSink, cancel: CancellationToken) -> Result<(), ChannelError> {
        self.starts
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.running.send_replace(true);
        cancel.cancelled().await;
        self.running.send_replace(false);
        Ok(())
    }
    async fn send(
        &self,
        _: &OutboundMessage,
        _: &dyn DeliveryProgress,
    ) -> Result<(), ChannelError> {
        Ok(())
    }
    async fn typing(&self, _: &Origin, _: bool) -> Result<(), ChannelError> {
        Ok(())
    }
}

impl Probe {
    fn new() -> Arc<Probe> {
        Arc::new(Probe {
            running: watch::channel(false).0,
            starts: Default::default(),
        })
    }

    fn starts(&self) -> usize {
        self.starts.load(std::sync::atomic::Ordering::SeqCst)
    }

    async fn wait_running(&self, want: bool) {
        let mut rx = self.running.subscribe();
        tokio::time::timeout(WITHIN, rx.wait_for(|r| *r == want))
            .await
            .unwrap_or_else(|_| panic!("the probe never became running = {want}"))
            .unwrap();
    }
}

fn member(owner: &str) -> Member {
    Member {
        owner: Arc::from(owner),
        lease_timeout: TIMEOUT,
    }
}

/// `owner`'s lease loop running `probe`'s inbound side under the supervisor.
fn spawn_hold(
    store: &Store,
    owner: &str,
    probe: &Arc<Probe>,
    cancel: &CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let (sink, _rx) = tokio::sync::mpsc::channel(1);
    let probe = probe.clone();
    let restarts = Arc::new(Restarts::default());
    tokio::spawn(hold(
        store.clone(),
        channel_lease("probe"),
        member(owner),
        cancel.clone(),
        move |_lease, token| {
            // The receiver lives as long as the loop: the sink stays open.
            let _keep = &_rx;
            supervise(probe.clone(), sink.clone(), token, restarts.clone())
        },
    ))
}

/// The lease `channel:probe` as the database has it.
async fn lease(store: &Store) -> Lease {
    store
        .leases()
        .await
        .unwrap()
        .into_iter()
        .find(|l| l.name == channel_lease("probe"))
        .expect("the lease has a row")
}

/// Waits until the lease has been renewed `times` more times (the holder's looks, and
/// with them as many attempts of a waiting process).
async fn renewals(store: &Store, times: usize) {
    let wait = async {
        let mut seen = lease(store).await.renewed_at;
        for _ in 0..times {
            loop {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let now = lease(store).await.renewed_at;
                if now > seen {
                    seen = now;
                    break;
                }
            }
        }
    };
    tokio::time::timeout(WITHIN, wait)
        .await
        .expect("the holder renews the lease");
}

/// The whole cycle: `a` takes the lease and runs the inbound side while `b` waits; when the
/// lease goes to another owner, `a` stops at once; when that owner lets it go, exactly one
/// of `a` and `b` takes it and starts while the other waits; the holder's stop releases
/// it, so the other takes over at once; its stop releases it too (a newcomer takes it at
/// once). Catches: a process that runs the
/// inbound side without the lease, one that keeps running it after losing the lease, one
/// that never takes over, and a stop that leaves the lease held until its expiry.
async fn two_owners(a_store: Store, b_store: Store) {
    let (a, b) = (Probe::new(), Probe::new());
    let (a_cancel, b_cancel) = (CancellationToken::new(), CancellationToken::new());
    let a_loop = spawn_hold(&a_store, "a", &a, &a_cancel);
    a.wait_running(true).await;
    let held = lease(&a_store).await;
    assert_eq!(held.owner, "a");

    let b_loop = spawn_hold(&b_store, "b", &b, &b_cancel);
    renewals(&a_store, 3).await;
    assert_eq!(b.starts(), 0, "b waits while a holds the lease");
    assert!(*a.running.borrow());

    // Another owner takes the lease from under `a` (as after a pause past its expiry).
    let name = channel_lease("probe");
    a_store.release_lease(&name, "a").await.unwrap();
    let c = a_store
        .acquire_lease(&name, "c", Duration::from_secs(600))
        .await
        .unwrap()
        .expect("c takes the released lease");
    assert_eq!(c.fence, held.fence + 1);
    a.wait_running(false).await;
    assert_eq!(b.starts(), 0, "c holds it: b still waits");

    a_store.release_lease(&name, "c").await.unwrap();
    // Both wait for it now: exactly one takes it and runs, the other keeps waiting.
    let owners = [
        ("a", &a, &a_store, a_cancel, a_loop),
        ("b", &b, &b_store, b_cancel, b_loop),
    ];
    let taken = tokio::time::timeout(WITHIN, async {
        loop {
            let l = lease(&a_store).await;
            if l.owner != "c" {
                return l;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a waiting owner takes the released lease");
    assert_eq!(taken.fence, c.fence + 1);
    let [first, second] = owners;
    let (winner, loser) = if taken.owner == "a" {
        (first, second)
    } else {
        (second, first)
    };
    winner.1.wait_running(true).await;
    let loser_starts = loser.1.starts();
    renewals(winner.2, 2).await;
    assert!(
        !*loser.1.running.borrow(),
        "{} waits while {} holds it",
        loser.0,
        winner.0
    );
    assert_eq!(loser.1.starts(), loser_starts);

    // The holder stops: it releases, and the other takes over without waiting for expiry.
    winner.3.cancel();
    tokio::time::timeout(WITHIN, winner.4)
        .await
        .unwrap()
        .unwrap();
    assert!(!*winner.1.running.borrow(), "stopped with its loop");
    loser.1.wait_running(true).await;
    let next = lease(loser.2).await;
    assert_eq!(
        (next.owner.as_str(), next.fence),
        (loser.0, taken.fence + 1)
    );

    loser.3.cancel();
    tokio::time::timeout(WITHIN, loser.4)
        .await
        .unwrap()
        .unwrap();
    assert!(!*loser.1.running.borrow());
    let d = a_store
        .acquire_lease(&name, "d", Duration::from_secs(600))
        .await
        .unwrap();
    assert!(d.is_some(), "released at the stop: free at once");
    assert_eq!(
        a.starts() + b.starts(),
        3,
        "a, then one of them, then the other"
    );
}

#[tokio::test]
async fn two_owners_on_sqlite() {
    let store = Store::open_in_memory().await.unwrap();
    two_owners(store.clone(), store).await;
}

#[tokio::test]
async fn two_owners_on_postgres() {
    let db = TestDb::create().await.unwrap();
    let a = Store::open_postgres(db.url()).await.unwrap();
    let b = Store::open_postgres(db.url()).await.unwrap();
    two_owners(a, b).await;
}

/// A holder whose database stops answering gives the work up within two thirds of the
/// timeout, before another process may take the lease. Catches: a holder that keeps
/// polling Telegram through a database outage, past its lease.
#[tokio::test]
async fn a_holder_that_cannot_renew_stops_the_work() {
    let db = TestDb::create().await.unwrap();
    let store = Store::open_postgres(db.url()).await.unwrap();
    let probe = Probe::new();
    let cancel = CancellationToken::new();
    let held = spawn_hold(&store, "a", &probe, &cancel);
    probe.wait_running(true).await;
    store
        .execute_for_tests("ALTER TABLE leases RENAME TO leases_gone")
        .await
        .unwrap();
    probe.wait_running(false).await;
    cancel.cancel();
    tokio::time::timeout(WITHIN, held).await.unwrap().unwrap();
    assert_eq!(probe.starts(), 1);
}
