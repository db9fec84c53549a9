//! What the floors above the agent do when a run ends, wired by `app` into the runtime's
//! parts: a sub-agent's end closes its progress line and queues its announce
//! (`subagents`). The agent calls them without knowing who they are.

use std::sync::Arc;

use async_trait::async_trait;

use crate::runtime::Runtime;
use crate::store::{RunFinished, RunRow};

/// Told of every run's end, once its row is final and before the session's waiting
/// messages are scheduled.
#[async_trait]
pub trait RunEndHook: Send + Sync {
    async fn ended(&self, rt: &Arc<Runtime>, run: &RunRow, finished: &RunFinished);
}

/// The run-end hooks in force, in the order `app` gave them (none in a bare runtime).
#[derive(Default)]
pub struct RunEndHooks(Vec<Arc<dyn RunEndHook>>);

impl RunEndHooks {
    pub fn new(hooks: Vec<Arc<dyn RunEndHook>>) -> RunEndHooks {
        RunEndHooks(hooks)
    }

    /// Tell every hook of `run`'s end.
    pub async fn ended(&self, rt: &Arc<Runtime>, run: &RunRow, finished: &RunFinished) {
        for hook in &self.0 {
            hook.ended(rt, run, finished).await;
        }
    }
}
