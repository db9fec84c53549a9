//! What every door to the job table shares (`cron.jobs[]` sync, the `cron` tool, `/cron`,
//! the API and `switchboard cron`): checking a job, adding, removing, enabling and
//! disabling it, and one line describing it. All on the store only, so the CLI can use
//! them while the daemon is down.

use crate::config::{Config, CronJobConfig};
use crate::store::{now_ms, CronJobRow, JobSource, Store, StoreError};

use super::schedule::Schedule;
pub use crate::config::cron_job::{check, check_field, valid_id, MAX_ID, MAX_MESSAGE, MAX_NAME};

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A bad job (the sentence says what).
    #[error("{0}")]
    Invalid(String),
    #[error("no job `{0}`")]
    NotFound(String),
    #[error("a job `{0}` exists already")]
    Exists(String),
    #[error("the job `{0}` comes from the config file (cron.jobs): change or remove it there")]
    FromConfig(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Occurrences of a cron expression [`shortest_gap`] looks at.
const GAP_SAMPLES: usize = 500;

/// The shortest time between two runs of `schedule` from `now` on (`None`: it runs at
/// most once). A cron expression is sampled over its next occurrences: enough to meet
/// the closest pair of any expression's fields, and the scheduler keeps the bound anyway.
pub fn shortest_gap(schedule: &Schedule, now: i64) -> Option<std::time::Duration> {
    match schedule {
        Schedule::At(_) => None,
        Schedule::Every(d) => Some(*d),
        Schedule::Cron { .. } => {
            let mut prev = schedule.next_after(now)?;
            let mut gap: Option<i64> = None;
            for _ in 0..GAP_SAMPLES {
                let Some(next) = schedule.next_after(prev) else {
                    break;
                };
                gap = Some(gap.map_or(next - prev, |g| g.min(next - prev)));
                prev = next;
            }
            gap.map(|g| std::time::Duration::from_millis(u64::try_from(g).unwrap_or(0)))
        }
    }
}

/// The first next time of a new (or changed) job: a one-shot's own time, even past (it
/// then runs once, at once), else the first time after now.
pub fn first_time(schedule: &Schedule, enabled: bool, now: i64) -> Option<i64> {
    if !enabled {
        return None;
    }
    match schedule {
        Schedule::At(t) => Some(*t),
        s => s.next_after(now),
    }
}

/// Add a job (from the tool or the CLI). A one-shot time in the past is refused.
pub async fn add(
    store: &Store,
    cfg: &Config,
    job: &CronJobConfig,
    source: JobSource,
) -> Result<CronJobRow, JobError> {
    let schedule = check(job, cfg).map_err(JobError::Invalid)?;
    let now = now_ms();
    if let Schedule::At(t) = schedule {
        if t <= now {
            return Err(JobError::Invalid("`at` is in the past".into()));
        }
    }
    let next = first_time(&schedule, job.enabled, now);
    if !store.insert_cron_job(job, source, next).await? {
        return Err(JobError::Exists(job.id.clone()));
    }
    found(store, &job.id).await
}

/// Remove a job added by the tool or the CLI (a config job is the config's to remove).
pub async fn remove(store: &Store, id: &str) -> Result<CronJobRow, JobError> {
    let job = found(store, id).await?;
    if job.source == JobSource::Config {
        return Err(JobError::FromConfig(id.to_string()));
    }
    store.delete_cron_job(id).await?;
    Ok(job)
}

/// Enable (next time: the first after now; a one-shot keeps its time if still ahead) or
/// disable a job. A config job's switch holds until its section in the file changes.
pub async fn set_enabled(store: &Store, id: &str, enabled: bool) -> Result<CronJobRow, JobError> {
    let job = found(store, id).await?;
    let next = if enabled {
        let schedule = Schedule::parse(&job.spec.schedule).map_err(JobError::Invalid)?;
        let now = now_ms();
        match (&schedule, job.next_run_at) {
            (Schedule::At(t), _) if *t <= now => {
                return Err(JobError::Invalid(
                    "this one-shot job's time has passed; add a new job".into(),
                ))
            }
            (_, Some(next)) if job.enabled => Some(next),
            _ => first_time(&schedule, true, now),
        }
    } else {
        None
    };
    store.set_cron_job_enabled(id, enabled, next).await?;
    found(store, id).await
}

pub async fn found(store: &Store, id: &str) -> Result<CronJobRow, JobError> {
    store
        .cron_job(id)
        .await?
        .ok_or_else(|| JobError::NotFound(id.to_string()))
}

/// Bring the config's `cron.jobs` into the table: new and changed ones (re)placed with a
/// first next time, unchanged ones left as they are (their next time, their switch),
/// removed ones deleted; jobs of the tool and the CLI untouched.
pub async fn sync_config(store: &Store, cfg: &Config) -> Result<(), StoreError> {
    let now = now_ms();
    let stored: Vec<CronJobRow> = store.cron_jobs().await?;
    let mut upsert = Vec::new();
    for job in &cfg.cron.jobs {
        let same = stored
            .iter()
            .any(|s| s.id == job.id && s.source == JobSource::Config && s.spec == *job);
        if same {
            continue;
        }
        if let Some(s) = stored
            .iter()
            .find(|s| s.id == job.id && s.source != JobSource::Config)
        {
            tracing::warn!(job = %s.id, source = s.source.as_str(), "cron: a job of the config file replaces the job of the same id added by the {}", s.source.as_str());
        }
        // Validated with the config; a job that fails here is kept off (never run).
        let next = match check(job, cfg) {
            Ok(schedule) => first_time(&schedule, job.enabled, now),
            Err(e) => {
                tracing::error!(job = %job.id, error = %e, "cron: job not scheduled");
                None
            }
        };
        upsert.push((job, next));
    }
    let keep: Vec<&str> = cfg.cron.jobs.iter().map(|j| j.id.as_str()).collect();
    let stale = stored
        .iter()
        .any(|s| s.source == JobSource::Config && !keep.contains(&s.id.as_str()));
    // Nothing to change: no write (start-up and reloads never wait on the writer for it).
    if upsert.is_empty() && !stale {
        return Ok(());
    }
    let removed = store.sync_config_cron_jobs(&upsert, &keep).await?;
    if !upsert.is_empty() || removed > 0 {
        tracing::info!(changed = upsert.len(), removed, "cron: config jobs synced");
    }
    Ok(())
}

/// One line about a job for people: `id (name): schedule, next …, runs`.
pub fn describe(job: &CronJobRow) -> String {
    let s = &job.spec.schedule;
    let schedule = if let Some(c) = &s.cron {
        match &s.tz {
            Some(tz) => format!("cron {c} ({tz})"),
            None => format!("cron {c} (UTC)"),
        }
    } else if let Some(e) = s.every {
        format!("every {}", humantime::format_duration(e))
    } else {
        format!("at {}", s.at.as_deref().unwrap_or(""))
    };
    let next = match (job.enabled, job.next_run_at) {
        (false, _) => "disabled".to_string(),
        (true, Some(t)) => format!("next {}", rfc3339(t)),
        (true, None) => "not due again".to_string(),
    };
    let name = job
        .spec
        .name
        .as_deref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    format!(
        "{}{name}: {schedule}, {next}, {} run{}{} [{}]",
        job.id,
        job.runs,
        if job.runs == 1 { "" } else { "s" },
        if job.skipped > 0 {
            format!(", {} skipped", job.skipped)
        } else {
            String::new()
        },
        job.source.as_str()
    )
}

/// Unix milliseconds as RFC 3339 (UTC, to the second).
pub fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.round(jiff::Unit::Second).unwrap_or(t).to_string())
        .unwrap_or_else(|_| ms.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CronFire;
    use switchboard_channels::{ChatKind, Origin};

    fn cfg(jobs: serde_json::Value) -> Config {
        crate::config::parse_config(
            &serde_json::json!({"cron": {"jobs": jobs}}).to_string(),
            &|_| None,
        )
        .unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn job(id: &str, every: &str) -> serde_json::Value {
        serde_json::json!({"id": id, "schedule": {"every": every}, "message": "m"})
    }

    /// A reload replaces changed config jobs, keeps unchanged ones as they were (next
    /// time, counters), removes dropped ones, and never touches the tool's or the CLI's.
    /// Catches: a reload wiping jobs added from a chat, or re-timing every config job.
    #[tokio::test]
    async fn config_sync_touches_only_config_jobs() {
        let store = Store::open_in_memory()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let first = cfg(serde_json::json!([job("a", "1h"), job("b", "1h")]));
        sync_config(&store, &first)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut tool_job = first.cron.jobs[0].clone();
        tool_job.id = "t".into();
        add(&store, &first, &tool_job, JobSource::Tool)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        store
            .set_cron_job_enabled("a", true, Some(42))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let second = cfg(serde_json::json!([job("a", "1h"), job("c", "2h")]));
        sync_config(&store, &second)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let all: Vec<CronJobRow> = store.cron_jobs().await.unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<(&str, JobSource)> = all.iter().map(|j| (j.id.as_str(), j.source)).collect();
        assert_eq!(
            ids,
            vec![
                ("a", JobSource::Config),
                ("c", JobSource::Config),
                ("t", JobSource::Tool)
            ]
        );
        assert_eq!(
            all[0].next_run_at,
            Some(42),
            "an unchanged job keeps its next time"
        );
        assert!(matches!(
            remove(&store, "a").await,
            Err(JobError::FromConfig(_))
        ));
    }

    /// A job's message waits in the inbox: the job is in flight (a new due time is
    /// skipped, counted, not stacked). Catches: a due job stacked on its running self.
    #[tokio::test]
    async fn a_job_in_flight_is_skipped() {
        let store = Store::open_in_memory()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let c = cfg(serde_json::json!([job("a", "1s")]));
        sync_config(&store, &c)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let origin = Origin {
            channel: "api".into(),
            account: None,
            chat_id: "cron:a".into(),
            thread_id: None,
            kind: ChatKind::Direct,
            reply_handle: None,
        };
        let inbox = store
            .fire_cron_job(&CronFire {
                job_id: "a",
                session_key: "agent:main:cron:a",
                origin: &origin,
                sender_id: "cron:a",
                text: "m",
                next_run_at: Some(5),
                disable: false,
                due_at: None,
            })
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("a manual run is never refused"));
        assert!(store.cron_job_in_flight(inbox).await.unwrap_or(false));
        store
            .skip_cron_job("a", Some(9))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let a = found(&store, "a").await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((a.runs, a.skipped, a.next_run_at), (1, 1, Some(9)));
        assert_eq!(a.last_inbox_id, Some(inbox));
    }

    /// Catches: a run's job slipping under `cron.minInterval` through a cron expression
    /// (every minute, or two close times of an hour) rather than `every`.
    #[test]
    fn the_shortest_gap_of_a_schedule_is_found() {
        let parse = |v: serde_json::Value| {
            Schedule::parse(&serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}")))
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let now = 1_780_000_000_000;
        let minutes = |m: u64| Some(std::time::Duration::from_secs(m * 60));
        assert_eq!(
            shortest_gap(&parse(serde_json::json!({"every": "90s"})), now),
            Some(std::time::Duration::from_secs(90))
        );
        assert_eq!(
            shortest_gap(&parse(serde_json::json!({"cron": "* * * * *"})), now),
            minutes(1)
        );
        assert_eq!(
            shortest_gap(&parse(serde_json::json!({"cron": "0,2 9 * * *"})), now),
            minutes(2)
        );
        assert_eq!(
            shortest_gap(&parse(serde_json::json!({"cron": "0 9 * * *"})), now),
            minutes(24 * 60)
        );
        assert_eq!(
            shortest_gap(
                &parse(serde_json::json!({"at": "2099-01-01T00:00:00Z"})),
                now
            ),
            None
        );
    }
}
