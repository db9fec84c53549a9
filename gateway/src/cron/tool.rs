//! The `cron` tool (`group:automation`): `add`, `list`, `remove` and `run` scheduled
//! jobs. A job added from a chat delivers to that chat unless it says otherwise; an
//! explicit `deliver` must be a chat the gateway knows (as for `message`).

use async_trait::async_trait;
use serde_json::{json, Value};

use super::fire::{fire, Fired};
use super::jobs::{self, JobError};
use crate::agent::provider::ToolSpec;
use crate::agent::tools::{str_arg, Tool, ToolContext, ToolError};
use crate::config::{CronJobConfig, CronSession, DeliverConfig, ScheduleConfig};
use crate::store::JobSource;

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
            description: "Scheduled jobs: `list`; `add` a job that sends `message` to an agent on a schedule (`schedule`: {cron: \"0 9 * * 1-5\", tz?} or {every: \"30m\"} or {at: \"2026-12-01T09:00:00Z\"}); its answer goes to this chat unless `deliver` names another; `remove` or `run` one by `id`.".into(),
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
                "agentId": {"type": "string"},
                "deliver": {"type": "object", "properties": {
                    "channel": {"type": "string"}, "chatId": {"type": "string"}, "threadId": {"type": "string"}
                }}
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
                    .map(|j| json!({"id": j.id, "summary": jobs::describe(j), "message": j.spec.message}))
                    .collect();
                Ok(json!({"jobs": list}).to_string())
            }
            "add" => {
                let job = job_from(ctx, &args).await?;
                let row = jobs::add(store, ctx.cfg, &job, JobSource::Tool).await?;
                ctx.rt.cron_wake.notify_one();
                Ok(
                    json!({"status": "added", "id": row.id, "summary": jobs::describe(&row)})
                        .to_string(),
                )
            }
            "remove" => {
                let row = jobs::remove(store, id()?).await?;
                ctx.rt.cron_wake.notify_one();
                Ok(json!({"status": "removed", "id": row.id}).to_string())
            }
            "run" => {
                let row = jobs::found(store, id()?).await?;
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
                crate::commands::cut_name(other)
            ))),
        }
    }
}

/// The job an `add` call describes.
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
    let deliver = match args.get("deliver") {
        None | Some(Value::Null) => {
            ctx.origin
                .filter(|o| crate::outbox::is_chat(o))
                .map(|o| DeliverConfig {
                    channel: o.channel.clone(),
                    chat_id: o.chat_id.clone(),
                    thread_id: o.thread_id.clone(),
                })
        }
        Some(v) => {
            let d: DeliverConfig = serde_json::from_value(v.clone()).map_err(bad)?;
            let known = ctx
                .rt
                .store
                .session_for_chat(&d.channel, &d.chat_id)
                .await?
                .is_some();
            if !known && !ctx.cfg.tools.message.allow_any_chat {
                return Err(ToolError::Model(format!(
                    "the gateway has no session with {} chat {}; jobs deliver only to known chats (tools.message.allowAnyChat)",
                    d.channel, d.chat_id
                )));
            }
            Some(d)
        }
    };
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
    let id = text("id").unwrap_or_else(|| {
        let u = uuid::Uuid::new_v4().simple().to_string();
        format!("job-{}", &u[..8])
    });
    Ok(CronJobConfig {
        id,
        name: text("name"),
        schedule,
        agent_id: text("agentId").or_else(|| Some(ctx.agent_id.to_string())),
        message: str_arg(args, "message")?.to_string(),
        session,
        deliver,
        enabled: true,
    })
}
