//! The store is its own crate (`switchboard-store`, below the gateway: it imports nothing
//! of it); `crate::store` names it here. The gateway fixes the one thing the store leaves
//! open: a cron job's definition is the config's job type.

pub use switchboard_store::*;

use crate::config::CronJobConfig;

/// A stored cron job, its definition the config's `cron.jobs[]` entry.
pub type CronJobRow = switchboard_store::CronJobRow<CronJobConfig>;

impl JobSpec for CronJobConfig {
    fn id(&self) -> &str {
        &self.id
    }

    fn enabled(&self) -> bool {
        self.enabled
    }
}
