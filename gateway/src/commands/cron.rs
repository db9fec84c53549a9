//! `/cron`: the scheduled jobs from a chat — `list` (the default), `run <id>` (now, its
//! next time unchanged), `enable <id>`, `disable <id>`.

use std::sync::Arc;

use crate::cron::fire::{fire, Fired};
use crate::cron::jobs::{self, JobError};
use crate::runtime::Runtime;

pub const USAGE: &str = "Usage: /cron [list] | run <id> | enable <id> | disable <id>";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CronCommand {
    List,
    Run(String),
    Enable(String),
    Disable(String),
}

pub fn parse(args: &[&str]) -> Result<CronCommand, String> {
    match args {
        [] | ["list"] => Ok(CronCommand::List),
        ["run", id] => Ok(CronCommand::Run(id.to_string())),
        ["enable", id] => Ok(CronCommand::Enable(id.to_string())),
        ["disable", id] => Ok(CronCommand::Disable(id.to_string())),
        _ => Err(USAGE.to_string()),
    }
}

pub async fn execute(rt: &Arc<Runtime>, cmd: CronCommand) -> String {
    match run(rt, cmd).await {
        Ok(answer) => answer,
        Err(e) => format!("⚠️ {e}"),
    }
}

async fn run(rt: &Arc<Runtime>, cmd: CronCommand) -> Result<String, JobError> {
    let store = &rt.store;
    Ok(match cmd {
        CronCommand::List => {
            let all = store.cron_jobs().await?;
            if all.is_empty() {
                "No scheduled jobs.".to_string()
            } else {
                let lines: Vec<String> = all.iter().map(jobs::describe).collect();
                format!("Scheduled jobs:\n{}", lines.join("\n"))
            }
        }
        CronCommand::Run(id) => {
            let job = jobs::found(store, &id).await?;
            match fire(rt, &job, true).await? {
                Fired::Queued { .. } => format!("Job {id} started."),
                Fired::Skipped => format!("Job {id} is still running."),
            }
        }
        CronCommand::Enable(id) => {
            let job = jobs::set_enabled(store, &id, true).await?;
            rt.tasks.cron_wake.notify_one();
            format!("Enabled: {}", jobs::describe(&job))
        }
        CronCommand::Disable(id) => {
            let job = jobs::set_enabled(store, &id, false).await?;
            rt.tasks.cron_wake.notify_one();
            format!("Disabled: {}", jobs::describe(&job))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: `/cron` arguments misread (a bare `/cron` not listing, a missing id
    /// accepted).
    #[test]
    fn parses_cron_commands() {
        assert_eq!(parse(&[]), Ok(CronCommand::List));
        assert_eq!(parse(&["list"]), Ok(CronCommand::List));
        assert_eq!(
            parse(&["run", "daily"]),
            Ok(CronCommand::Run("daily".into()))
        );
        assert_eq!(parse(&["enable", "a"]), Ok(CronCommand::Enable("a".into())));
        assert_eq!(
            parse(&["disable", "a"]),
            Ok(CronCommand::Disable("a".into()))
        );
        assert_eq!(parse(&["run"]), Err(USAGE.to_string()));
        assert_eq!(parse(&["drop", "a"]), Err(USAGE.to_string()));
    }
}
