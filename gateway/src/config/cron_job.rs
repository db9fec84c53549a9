//! Checking a cron job's definition (from `cron.jobs[]`, the `cron` tool, `/cron`, the API
//! or `switchboard cron`): its id, name, message, agent, delivery and schedule. On the
//! config's floor, since the config's validation checks `cron.jobs[]` with it.

use super::schedule::Schedule;
use super::{Config, CronJobConfig};

/// Longest job message, in bytes.
pub const MAX_MESSAGE: usize = 16 * 1024;
/// Longest job id and name, in characters.
pub const MAX_ID: usize = 64;
pub const MAX_NAME: usize = 100;

/// Whether `id` is a valid job id: 1 to 64 of `[A-Za-z0-9_-]`.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Check `job` against `cfg`; its schedule when it is fine, else what is wrong.
pub fn check(job: &CronJobConfig, cfg: &Config) -> Result<Schedule, String> {
    check_field(job, cfg).map_err(|(_, message)| message)
}

/// [`check`], saying which key of the job is wrong (`id`, `schedule`, …).
pub fn check_field(job: &CronJobConfig, cfg: &Config) -> Result<Schedule, (&'static str, String)> {
    if !valid_id(&job.id) {
        return Err((
            "id",
            format!(
                "the id must be 1 to {MAX_ID} letters, digits, `-` or `_`, got {:?}",
                job.id
            ),
        ));
    }
    if job
        .name
        .as_ref()
        .is_some_and(|n| n.chars().count() > MAX_NAME)
    {
        return Err((
            "name",
            format!("the name is longer than {MAX_NAME} characters"),
        ));
    }
    if job.message.trim().is_empty() {
        return Err(("message", "the message must not be empty".into()));
    }
    if job.message.len() > MAX_MESSAGE {
        return Err((
            "message",
            format!("the message is over {MAX_MESSAGE} bytes"),
        ));
    }
    if let Some(agent) = &job.agent_id {
        if super::agent_entry(cfg, agent).is_none() && *agent != super::default_agent_id(cfg) {
            return Err(("agentId", format!("no agent `{agent}` in agents.list")));
        }
    }
    if let Some(d) = &job.deliver {
        // Every channel with a config section is a delivery target.
        let channels = super::ChannelsConfig::ids();
        if !channels.contains(&d.channel.as_str()) {
            return Err((
                "deliver",
                format!(
                    "deliver.channel must be one of {}, got {:?}",
                    channels.join(", "),
                    d.channel
                ),
            ));
        }
        if d.chat_id.trim().is_empty() {
            return Err(("deliver", "deliver.chatId must not be empty".into()));
        }
    }
    Schedule::parse(&job.schedule).map_err(|e| ("schedule", e))
}
