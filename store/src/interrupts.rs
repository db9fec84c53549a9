//! Runs cut short outside their loop (both engines).

use super::engine::engine_fns;
use super::runs::RunRow;
use super::Result;

engine_fns! {
    /// Checkpoint a running run at shutdown: record its steps and usage so far. It stays
    /// `running` (mid-flight): the next start resumes it from its transcript, or ends it
    /// as interrupted (`subagents.onRestart: "interrupt"`), and does not let it claim
    /// messages again (they belong to the runs queued behind it).
    pub async fn checkpoint_run(&self, id: &str, steps: i64, input_tokens: i64, output_tokens: i64) -> Result<()>;
    /// Mark a run cancelled that was taken off its lane before it started (queued, or
    /// `running` but not yet resumed after a restart).
    pub async fn cancel_queued_run(&self, id: &str) -> Result<()>;
    /// Drop what waits in a session, in one transaction: the runs `run_ids` (taken off
    /// their lane before they started) end `cancelled` with `error`, and its waiting
    /// messages are deleted. Returns the inbox ids of the messages dropped.
    pub async fn drop_waiting(&self, session_key: &str, run_ids: &[String], error: &str) -> Result<Vec<i64>>;
    /// The inbox ids of the messages a run claimed (for a `run.ended` event written after
    /// the run's own code stopped, e.g. by a panic).
    pub async fn claimed_by(&self, run: &RunRow) -> Result<Vec<i64>>;
}
