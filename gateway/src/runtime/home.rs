//! Where this daemon lives: its state directory, the agent definitions found there, and
//! its place among the processes sharing its database.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// This process as one of several active on one database (shared mode).
#[derive(Debug, Clone)]
pub struct Member {
    /// The process's lease owner id (`host:pid:random`).
    pub owner: Arc<str>,
    /// `storage.leaseTimeout`: how long what this process holds outlives its last renewal.
    pub lease_timeout: Duration,
}

/// The daemon's state dir, agents and membership.
pub struct Home {
    pub state_dir: PathBuf,
    /// The agent definitions in force (built-ins, agent files, `agents.list`).
    pub agents: crate::agents::Catalog,
    /// `Some` when this process is one of several active on its database (shared mode);
    /// `None` when it is the one process that acts (SQLite, standby mode).
    pub member: Option<Member>,
}

impl Home {
    pub fn new(state_dir: PathBuf, member: Option<Member>) -> Home {
        Home {
            agents: crate::agents::Catalog::new(
                state_dir.clone(),
                crate::agents::sources::FRESH_FOR,
            ),
            state_dir,
            member,
        }
    }
}
