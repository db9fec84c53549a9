//! Scheduled jobs (docs/tools.md, Scheduled jobs): schedules (`schedule`), the job
//! operations every door shares (`jobs`), running a due job (`fire`), the scheduler task
//! (`scheduler`), the `cron` tool (`tool`) and `switchboard cron` (`cli`). The table is in
//! `store/cron.rs`.
//!
//! A job's turn is an ordinary run whose message comes from the sender `cron:<jobId>`
//! and whose answer goes, through the outbox, to the job's `deliver` chat, headed with
//! the job's name.

pub mod cli;
pub mod fire;
pub mod jobs;
pub use crate::config::schedule;
pub mod scheduler;
pub mod tool;

pub use crate::session_key::{cron_job_of as job_of, CRON_SENDER as SENDER_PREFIX};
