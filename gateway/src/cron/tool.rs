//! The `cron` tool (`group:automation`): `add`, `list`, `remove` and `run` scheduled
//! jobs. A job a run makes belongs to that run's chat and agent (a run acts for its own
//! chat): it delivers only to that chat, runs as the run's agent (or one of its
//! `allowAgents`) in a session of its own — the agent's main session only when the run is
//! in it —, and fires at most every `cron.minInterval`. The tool lists, removes and runs
//! only the jobs of its own chat; the operator's jobs (config, CLI) are not its to touch.

use async_trait::async_trait;
use serde_json::{json, Value};

use super::fire::{fire, Fired};
use super::jobs::{self, JobError};
use super::schedule::Schedule;
use crate::agent::provider::ToolSpec;
use crate::agent::tools::{str_arg, Tool, ToolContext, ToolError};
use crate::config::{CronJobConfig, CronSession, DeliverConfig, ScheduleConfig};
use crate::store::{now_ms, CronJobRow, JobSource};
use crate::subagents::spawn::allowed_agents;

pub struct CronTool;

impl From<JobError> for ToolError {
    fn from(e: JobError) -> Self {
        match e {
            JobError::Store(e) => ToolError::Fatal(e.to_string()),
            other => ToolError::Model(other.to_string()),
        }
    }
}

#[async_trait]
impl Tool for CronTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "cron".into(),
            description: "Scheduled jobs: `list`; `add` a job that sends `message` to an agent on a schedule (`schedule`: {cron: \"0 9 * * 1-5\", tz?} or {every: \"30m\"} or {at: \"2026-12-01T09:00:00Z\"}); its answer goes to this chat; `remove` or `run` one of this chat's jobs by `id`.".into(),
            parameters: json!({"type": "object", "properties": {
                "action": {"type": "string", "enum": ["add", "list", "remove", "run"]},
                "id": {"type": "string", "description": "letters, digits, - and _ (add: default generated)"},
                "name": {"type": "string"},
                "schedule": {"type": "object", "properties": {
                    "cron": {"type": "string"}, "tz": {"type": "string"},
                    "every": {"type": "string"}, "at": {"type": "string"}
                }},
                "message": {"type": "string"},
                "session": {"type": "string", "enum": ["isolated", "main"]},
                "agentId": {"type": "string"}
            }, "required": ["action"]}),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        let store = &ctx.rt.store;
        let id = || str_arg(&args, "id");
        match str_arg(&args, "action")? {
            "list" => {
                let list: Vec<Value> = store
                    .cron_jobs()
                    .await?
                    .iter()
                    .filter(|j| ours(ctx, j))
                    .map(|j| json!({"id": j.id, "summary": jobs::describe(j), "message": j.spec.message}))
                    .collect();
                Ok(json!({"jobs": list}).to_string())
            }
            "add" => {
                let job = job_from(ctx, &args).await?;
                let row = jobs::add(store, ctx.cfg, &job, JobSource::Tool).await?;
                ctx.rt.tasks.cron_wake.notify_one();
                Ok(
                    json!({"status": "added", "id": row.id, "summary": jobs::describe(&row)})
                        .to_string(),
                )
            }
            "remove" => {
                let row = own_job(ctx, id()?).await?;
                let row = jobs::remove(store, &row.id).await?;
                ctx.rt.tasks.cron_wake.notify_one();
                Ok(json!({"status": "removed", "id": row.id}).to_string())
            }
            "run" => {
                let row = own_job(ctx, id()?).await?;
                let min = ctx.cfg.cron.min_interval;
                let since = now_ms() - row.last_run_at.unwrap_or(i64::MIN / 2);
                if since < min.as_millis() as i64 {
                    return Err(ToolError::Model(format!(
                        "the job `{}` ran less than {} ago; a job runs at most every cron.minInterval",
                        row.id,
                        crate::config::duration::format(min)
                    )));
                }
                match fire(ctx.rt, &row, true).await? {
                    Fired::Queued { session_key, .. } => Ok(
                        json!({"status": "started", "id": row.id, "sessionKey": session_key})
                            .to_string(),
                    ),
                    Fired::Skipped => Err(ToolError::Model(format!(
                        "the job `{}` is still running",
                        row.id
                    ))),
                }
            }
            other => Err(ToolError::Model(format!(
                "unknown action `{}`; use add, list, remove or run",
                crate::text::cut_name(other)
            ))),
        }
    }
}

/// Whether `job` is one of the calling run's chat: made by the tool and delivering to
/// the run's own chat (a chat-less run's: to none).
fn ours(ctx: &ToolContext<'_>, job: &CronJobRow) -> bool {
    job.source == JobSource::Tool && deliver_of(ctx) == job.spec.deliver
}

/// Job `id`, when it is one of the calling run's chat (else, as for a missing one,
/// "no job": a run learns nothing of other chats' jobs).
async fn own_job(ctx: &ToolContext<'_>, id: &str) -> Result<CronJobRow, ToolError> {
    match ctx.rt.store.cron_job(id).await? {
        Some(row) if ours(ctx, &row) => Ok(row),
        _ => Err(JobError::NotFound(id.to_string()).into()),
    }
}

/// Where the calling run's jobs deliver: its own chat (`None`: a run with no chat, such
/// as an HTTP API caller's, whose jobs' answers stay in their sessions).
fn deliver_of(ctx: &ToolContext<'_>) -> Option<DeliverConfig> {
    let own = ctx.origin.filter(|o| crate::outbox::is_chat(o));
    own.map(|o| DeliverConfig {
        channel: o.channel.clone(),
        chat_id: o.chat_id.clone(),
        thread_id: o.thread_id.clone(),
    })
}

/// The job an `add` call describes, held to what the calling run may do.
async fn job_from(ctx: &ToolContext<'_>, args: &Value) -> Result<CronJobConfig, ToolError> {
    let bad = |e: serde_json::Error| ToolError::Model(format!("bad job: {e}"));
    let schedule: ScheduleConfig = match args.get("schedule") {
        Some(v) => serde_json::from_value(v.clone()).map_err(bad)?,
        None => return Err(ToolError::Model("missing `schedule`".into())),
    };
    let session: CronSession = match args.get("session") {
        None | Some(Value::Null) => CronSession::Isolated,
        Some(v) => serde_json::from_value(v.clone()).map_err(bad)?,
    };
    if args.get("deliver").is_some_and(|v| !v.is_null()) {
        return Err(ToolError::Model(
            "a job made here delivers to this chat only; leave out `deliver`".into(),
        ));
    }
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let agent = match text("agentId") {
        None => ctx.agent_id.to_string(),
        Some(asked) => job_agent(ctx, &asked)?,
    };
    if session == CronSession::Main
        && !crate::session_key::SessionKey::parse(ctx.session_key)
            .is_ok_and(|k| k.is_main_of(&agent))
    {
        return Err(ToolError::Model(format!(
            "`session: \"main\"` runs the job in agent {agent}'s main session; only a run in that session may ask for it (this job runs in a session of its own: leave out `session`)"
        )));
    }
    if let Ok(parsed) = Schedule::parse(&schedule) {
        let min = ctx.cfg.cron.min_interval;
        if jobs::shortest_gap(&parsed, now_ms()).is_some_and(|gap| gap < min) {
            return Err(ToolError::Model(format!(
                "the schedule runs more often than every {}; a job made here runs at most every cron.minInterval",
                crate::config::duration::format(min)
            )));
        }
    }
    let id = text("id").unwrap_or_else(|| {
        let u = uuid::Uuid::new_v4().simple().to_string();
        format!("job-{}", &u[..8])
    });
    Ok(CronJobConfig {
        id,
        name: text("name"),
        schedule,
        agent_id: Some(agent),
        message: str_arg(args, "message")?.to_string(),
        session,
        deliver: deliver_of(ctx),
        enabled: true,
    })
}

/// The agent `asked` names, when the calling run's agent may act through it: itself, or
/// one of its `allowAgents` (as for `sessions_spawn`).
fn job_agent(ctx: &ToolContext<'_>, asked: &str) -> Result<String, ToolError> {
    let cfg = ctx.rt.config();
    let agents = ctx.rt.agents(&cfg);
    let id = agents
        .resolve(asked)
        .map(|d| d.id.clone())
        .map_err(|e| ToolError::Model(e.to_string()))?;
    if id == ctx.agent_id || allowed_agents(ctx.cfg, &agents, ctx.agent_id).contains(&id) {
        Ok(id)
    } else {
        Err(ToolError::Model(format!(
            "agent {} may not make jobs for agent {id} (its allowAgents)",
            ctx.agent_id
        )))
    }
}
