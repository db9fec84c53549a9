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
pub mod schedule;
pub mod scheduler;
pub mod tool;

use crate::runtime::Runtime;

/// Sender id of a job's messages: `cron:<jobId>`.
pub const SENDER_PREFIX: &str = "cron:";

/// The job a run answers, if it is a job's turn: from the sender of the newest message
/// it took (`cron:<jobId>`), else from its session key (`agent:<id>:cron:<jobId>`).
pub fn job_of(session_key: &str, newest_sender: Option<&str>) -> Option<String> {
    if let Some(id) = newest_sender.and_then(|s| s.strip_prefix(SENDER_PREFIX)) {
        return Some(id.to_string());
    }
    if newest_sender.is_some() {
        return None;
    }
    crate::session_key::SessionKey::parse(session_key)
        .ok()?
        .cron_job()
        .map(str::to_string)
}

/// `answer` headed with the name of `job` (its id when it has no name or is gone).
pub async fn headed(rt: &Runtime, job: &str, answer: String) -> String {
    let name = match rt.store.cron_job::<crate::config::CronJobConfig>(job).await {
        Ok(Some(j)) => j.spec.name.unwrap_or(j.id),
        _ => job.to_string(),
    };
    format!("⏰ {name}\n\n{answer}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_s_turn_is_known_by_its_sender_or_session() {
        assert_eq!(
            job_of("agent:main:main", Some("cron:daily")),
            Some("daily".into())
        );
        assert_eq!(job_of("agent:main:cron:daily", None), Some("daily".into()));
        assert_eq!(job_of("agent:main:cron:daily", Some("webchat:u")), None);
        assert_eq!(job_of("agent:main:main", None), None);
        assert_eq!(job_of("agent:main:main", Some("webchat:u")), None);
    }
}
