//! Lanes: named FIFO queues of runs, each with a live-resizable concurrency cap.
//! Runs of one session are serialized inside a lane; runs of different sessions are not.
//!
//! Architecture invariant: `queue` never does IO and knows nothing of agents or the
//! store. It runs opaque jobs and reports counts.

mod lane;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use lane::{Job, Lane, LaneStats, Slot};

pub const MAIN: &str = "main";
pub const SUBAGENT: &str = "subagent";
pub const CRON: &str = "cron";

/// The set of lanes of one gateway.
pub struct Lanes {
    lanes: BTreeMap<&'static str, Arc<Lane>>,
}

impl Lanes {
    pub fn new(main_cap: usize, subagent_cap: usize, cron_cap: usize) -> Self {
        let mut lanes = BTreeMap::new();
        lanes.insert(MAIN, Lane::new(MAIN, main_cap));
        lanes.insert(SUBAGENT, Lane::new(SUBAGENT, subagent_cap));
        lanes.insert(CRON, Lane::new(CRON, cron_cap));
        Lanes { lanes }
    }

    /// The lane called `name`; unknown names fall back to `main`.
    pub fn get(&self, name: &str) -> &Arc<Lane> {
        match self.lanes.get(name) {
            Some(l) => l,
            // `MAIN` is inserted in `new` and never removed.
            None => &self.lanes[MAIN],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Lane>> {
        self.lanes.values()
    }

    /// Stop starting queued jobs in every lane (shutdown). Running jobs go on.
    pub fn close(&self) {
        for l in self.lanes.values() {
            l.close();
        }
    }

    /// Wait until no job runs in any lane.
    pub async fn wait_idle(&self) {
        for l in self.lanes.values() {
            l.wait_idle().await;
        }
    }
}
