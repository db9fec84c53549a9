//! Shared mode's bus (`cluster::bus`) on a real PostgreSQL (the test kit's throwaway
//! cluster): what an event costs from `emit` on one process to the subscribers of another
//! — the publisher's `NOTIFY`, the server, the other's listener, decoding and re-emitting.
//! The two "processes" are two runtimes here, each with its own pool and listening
//! connection, so the path is the one between two daemons.
//!
//! - `bus_one_event`: one event at a time, emit → received on the other (a round trip of
//!   the publisher's statement and the delivery);
//! - `bus_64_events`: 64 emitted at once (a busy process): the publisher sends them in one
//!   statement; divide by 64 for the cost per event.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use switchboard::cluster::{bus, Member};
use switchboard::config::Config;
use switchboard::events::Event;
use switchboard::runtime::{EnvKeys, Runtime};
use switchboard::store::Store;
use switchboard_testkit::pg::TestDb;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

async fn process(
    db: &TestDb,
    owner: &str,
    tasks: &TaskTracker,
    cancel: &CancellationToken,
) -> Arc<Runtime> {
    let store = Store::open_postgres(db.url()).await.unwrap();
    let (_tx, rx) = watch::channel(Arc::new(Config::default()));
    let rt = Runtime::new(
        store,
        rx,
        EnvKeys::default(),
        switchboard::runtime::Home::new(std::env::temp_dir(), None),
        CancellationToken::new(),
        switchboard::app::parts(),
    );
    let member = Member {
        owner: Arc::from(owner),
        lease_timeout: Duration::from_secs(15),
    };
    bus::start(&rt, &member, tasks, cancel.clone())
        .await
        .unwrap();
    rt
}

fn step(n: u64) -> Event {
    Event::RunStep {
        session_key: "agent:main:bench".into(),
        run_id: "5f0c6a52-6f8e-4a0f-9d1e-0c1b7f3e9a11".into(),
        step: n,
    }
}

fn bus(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let db = rt.block_on(TestDb::create()).unwrap();
    let (tasks, cancel) = (TaskTracker::new(), CancellationToken::new());
    let a = rt.block_on(process(&db, "a:1:bench", &tasks, &cancel));
    let b = rt.block_on(process(&db, "b:2:bench", &tasks, &cancel));
    let mut heard = b.events.subscribe();

    c.bench_function("bus_one_event", |bench| {
        bench.iter(|| {
            rt.block_on(async {
                a.emit(step(1));
                heard.recv().await.unwrap();
            })
        })
    });
    c.bench_function("bus_64_events", |bench| {
        bench.iter(|| {
            rt.block_on(async {
                for n in 0..64 {
                    a.emit(step(n));
                }
                for _ in 0..64 {
                    heard.recv().await.unwrap();
                }
            })
        })
    });
    cancel.cancel();
    tasks.close();
    rt.block_on(tasks.wait());
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3));
    targets = bus
}
criterion_main!(benches);
