//! `sessions_spawn` (non-blocking: returns `accepted` at once) and `agents_list`.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::agent::dispatch;
use crate::agent::models;
use crate::agent::provider::ToolSpec;
use crate::agent::tools::{Tool, ToolContext, ToolError};
use crate::agents::{Isolation, Registry};
use crate::config::limits::MAX_RUN_TIMEOUT_SECS;
use crate::config::{self, Config};
use crate::events::Event;
use crate::runtime::Runtime;
use crate::store::NewSubagent;

use super::spawn_args;

/// The agent ids `agent_id` may spawn under: its `subagents.allowAgents` (or its agent
/// file's `allowAgents`), default only itself; `["*"]` means every agent in `agents`.
/// Entries that name an agent by alias or in another case are given as its id.
pub fn allowed_agents(cfg: &Config, agents: &Registry, agent_id: &str) -> Vec<String> {
    let allow = config::agent_entry(cfg, agent_id)
        .and_then(|a| a.subagents)
        .and_then(|s| s.allow_agents)
        .or_else(|| agents.get(agent_id).and_then(|d| d.allow_agents.clone()))
        .unwrap_or_else(|| vec![agent_id.to_string()]);
    if allow.iter().any(|a| a == "*") {
        return agents.all().iter().map(|a| a.id.clone()).collect();
    }
    let mut out: Vec<String> = Vec::new();
    for a in allow {
        let id = agents.resolve(&a).map(|d| d.id.clone()).unwrap_or(a);
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

pub struct SessionsSpawn;

#[async_trait]
impl Tool for SessionsSpawn {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "sessions_spawn".into(),
            description: "Start a sub-agent: a background run in its own session. Returns at once; when it ends, \
                a Status/Result/Notes/Stats announce is posted to this chat and added to your conversation. \
                `agentId` takes an agent id or alias (see agents_list)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "What the sub-agent should do", "maxLength": spawn_args::MAX_TASK_CHARS},
                    "label": {"type": "string", "maxLength": spawn_args::MAX_LABEL_CHARS},
                    "agentId": {"type": "string"},
                    "model": {"type": "string", "description": "provider/model"},
                    "thinking": {"type": "string", "enum": ["off", "minimal", "low", "medium", "high"], "description": "How hard the child thinks (its model API's reasoning effort or thinking budget)."},
                    "isolation": {"type": "string", "enum": ["none", "worktree"], "description": "worktree: the child works in its own git worktree and branch (when the workspace is a clean git repository)"},
                    "runTimeoutSeconds": {"type": "integer", "minimum": 0, "maximum": MAX_RUN_TIMEOUT_SECS, "description": "0 = no timeout"},
                    "cleanup": {"type": "string", "enum": ["keep", "delete"]}
                },
                "required": ["task"]
            }),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, args: Value) -> Result<String, ToolError> {
        if ctx.is_subagent {
            return Err(ToolError::Model(
                "forbidden: sub-agents cannot spawn sub-agents".into(),
            ));
        }
        let a = spawn_args::parse(&args)?;
        let child = create(ctx, &a, None).await?;
        let mut out = json!({"status": "accepted", "runId": child.run_id, "childSessionKey": child.child_key});
        if let Some(w) = child.warning {
            out["warning"] = json!(w);
        }
        Ok(out.to_string())
    }
}

/// A child just created (and queued on the `subagent` lane).
pub struct Created {
    pub run_id: String,
    pub child_key: String,
    /// The agent it runs as.
    pub agent_id: String,
    /// Why a requested model was not used, if one was not.
    pub warning: Option<String>,
}

/// Create a child of the calling run and queue it: the one way children are made, for
/// `sessions_spawn` and `task`. Resolves the agent (id or alias; allowed for the caller),
/// its timeout and model, commits the child (session, registry row, run, task message; and
/// `task_call`, the `task` tool call creating it, if any) in one transaction, publishes
/// `subagent.spawned`, then starts it.
pub async fn create(
    ctx: &ToolContext<'_>,
    a: &spawn_args::SpawnArgs,
    task_call: Option<&str>,
) -> Result<Created, ToolError> {
    let cfg = ctx.rt.config();
    let agents = ctx.rt.agents(&cfg);
    // An id or an alias, any case; unknown: the error lists what is accepted.
    let def = match a.agent_id.as_deref() {
        Some(name) => Some(
            agents
                .resolve(name)
                .map_err(|e| ToolError::Model(e.to_string()))?
                .clone(),
        ),
        None => agents.get(ctx.agent_id).cloned(),
    };
    let agent_id = def
        .as_ref()
        .map(|d| d.id.clone())
        .unwrap_or_else(|| ctx.agent_id.to_string());
    let allowed = allowed_agents(&cfg, &agents, ctx.agent_id);
    if !allowed.contains(&agent_id) {
        return Err(ToolError::Model(format!(
            "agentId `{agent_id}` is not allowed for this agent; allowed: {}",
            allowed.join(", ")
        )));
    }
    // Validation holds the configured default to the same range as the argument.
    // Explicit > the agent definition's `timeout` > the configured default.
    let timeout_secs = a
        .run_timeout_seconds
        .or_else(|| def.as_ref().and_then(|d| d.timeout).map(|t| t.as_secs()))
        .unwrap_or(cfg.agents.defaults.subagents.run_timeout_seconds)
        .min(MAX_RUN_TIMEOUT_SECS);

    // Model: explicit > the agent definition's > per-agent subagents.model >
    // defaults.subagents.model > caller's.
    let target = config::agent_entry(&cfg, &agent_id);
    let requester = config::agent_entry(&cfg, ctx.agent_id);
    let mut warning = None;
    let defined = def.as_ref().and_then(|d| d.model.clone()).filter(|m| {
            let ok = models::resolve(&cfg, Some(m), &ctx.rt.http, &ctx.rt.http.keys).is_ok();
            // (No warning about a model an explicit `model` replaces anyway.)
            if !ok && a.model.is_none() {
                warning = Some(format!(
                    "the model `{m}` of agent `{agent_id}` cannot be used; the sub-agent uses the default model"
                ));
            }
            ok
        });
    let fallback = defined
        .or_else(|| {
            target
                .as_ref()
                .and_then(|a| a.subagents.as_ref())
                .and_then(|s| s.model.clone())
        })
        .or_else(|| cfg.agents.defaults.subagents.model.clone())
        .or_else(|| {
            let pick = models::Pick {
                agent: requester.as_ref(),
                ..models::Pick::default()
            };
            models::reference_for(&cfg, &pick, &ctx.rt.http.keys)
        });
    let model = match a.model.clone() {
        Some(m) => match models::resolve(&cfg, Some(&m), &ctx.rt.http, &ctx.rt.http.keys) {
            Ok(_) => Some(m),
            Err(e) => {
                warning = Some(format!(
                    "model `{m}` was skipped ({e}); the sub-agent uses {}",
                    fallback.as_deref().unwrap_or("the default model")
                ));
                fallback
            }
        },
        None => fallback,
    };

    let run_id = uuid::Uuid::new_v4().to_string();
    // `hooks.SubagentStart` may refuse the spawn; the model is told why.
    if !cfg.hooks.subagent_start.is_empty() {
        let workspace = config::workspace_for(&cfg, target.as_ref(), &ctx.rt.home.state_dir);
        let payload = super::hooks::start_payload(
            &run_id,
            a.label.as_deref(),
            &agent_id,
            &a.task,
            ctx.session_key,
        );
        super::hooks::run_start(ctx.rt, &workspace, &payload)
            .await
            .map_err(|why| {
                ToolError::Model(format!(
                    "the spawn was refused by a SubagentStart hook: {why}"
                ))
            })?;
    }
    let child_key =
        crate::session_key::SessionKey::subagent(&agent_id, uuid::Uuid::new_v4().to_string())
            .to_string();
    let child_session_id = uuid::Uuid::new_v4().to_string();
    let run = ctx
        .rt
        .store
        .create_subagent(
            &NewSubagent {
                run_id: &run_id,
                child_session_key: &child_key,
                child_session_id: &child_session_id,
                requester_session_key: ctx.session_key,
                requester_run_id: Some(ctx.run_id),
                requester_origin: ctx.origin,
                task: &a.task,
                label: a.label.as_deref(),
                agent_id: &agent_id,
                model: model.as_deref(),
                thinking: a
                    .thinking
                    .as_deref()
                    .or(def.as_ref().and_then(|d| d.thinking.as_deref()))
                    .or(cfg.agents.defaults.subagents.thinking.as_deref()),
                cleanup: a.cleanup,
                // At most MAX_RUN_TIMEOUT_SECS (seven days): no cast below can wrap.
                run_timeout_seconds: timeout_secs as i64,
                task_call_id: task_call,
            },
            (timeout_secs > 0).then(|| (timeout_secs * 1000) as i64),
        )
        .await?;
    // Isolation: the argument > the agent definition's; recorded before the run starts.
    let isolation = a.isolation.or(def.as_ref().and_then(|d| d.isolation));
    if isolation == Some(Isolation::Worktree) {
        let workspace = config::workspace_for(&cfg, target.as_ref(), &ctx.rt.home.state_dir);
        let label = a.label.as_deref().unwrap_or(&agent_id);
        super::worktree::isolate(ctx.rt, &run_id, &child_key, label, &workspace).await?;
    }
    let spawned = Event::SubagentSpawned {
        requester: ctx.session_key.to_string(),
        child_session_key: child_key.clone(),
        run_id: run_id.clone(),
    };
    publish_spawn_then_start(ctx.rt, spawned, || dispatch::schedule_row(ctx.rt, run));
    Ok(Created {
        run_id,
        child_key,
        agent_id,
        warning,
    })
}

/// Publish `subagent.spawned` (`spawned`: a requester's new child), then `start` the
/// child's run. In this order: the child's run may start on another worker thread at once
/// and, on a fast model, end and announce before the spawning thread runs again; a
/// follower of the requester's events (a web chat socket, `/api/events`) must learn of the
/// child before any event of the child's — its run, its `subagent.announced`, the
/// announce's `outbox.sent` — or it drops or misses them.
fn publish_spawn_then_start(rt: &Runtime, spawned: Event, start: impl FnOnce()) {
    rt.emit(spawned);
    start();
}

pub struct AgentsList;

#[async_trait]
impl Tool for AgentsList {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "agents_list".into(),
            description:
                "List the agents: id, name, description, aliases, and whether you may pass it \
                (or an alias) as `agentId` to sessions_spawn (`allowed`)."
                    .into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    async fn call(&self, ctx: &ToolContext<'_>, _args: Value) -> Result<String, ToolError> {
        let cfg = ctx.rt.config();
        let agents = ctx.rt.agents(&cfg);
        let allowed = allowed_agents(&cfg, &agents, ctx.agent_id);
        let list: Vec<Value> = agents
            .all()
            .iter()
            .map(|d| {
                let name = config::agent_entry(&cfg, &d.id)
                    .and_then(|a| a.name)
                    .unwrap_or_else(|| d.id.clone());
                json!({
                    "id": d.id,
                    "name": name,
                    "description": d.description,
                    "aliases": d.aliases,
                    "allowed": allowed.contains(&d.id),
                    "self": d.id == ctx.agent_id,
                })
            })
            .collect();
        Ok(json!({"agents": list}).to_string())
    }
}

/// Registered by the tool registry.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(SessionsSpawn),
        Arc::new(AgentsList),
        Arc::new(super::tool::Subagents),
        Arc::new(super::task::Task),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Catches: `sessions_spawn` starting the child's run before it publishes
    /// `subagent.spawned`, so a child that ends (and announces) quickly has its events on
    /// the bus before its spawn: the spawn-announce bench then waited 30 s for an announce
    /// it had already skipped, and a web chat socket dropped the child's events.
    #[tokio::test]
    async fn the_spawn_event_is_on_the_bus_before_the_child_starts() {
        let (_dir, rt) = crate::runtime::testing::runtime("{}").await;
        let mut bus = rt.events.subscribe();
        let event = Event::SubagentSpawned {
            requester: "agent:main:main".into(),
            child_session_key: "agent:main:subagent:1".into(),
            run_id: "r1".into(),
        };
        let mut seen_at_start = None;
        publish_spawn_then_start(&rt, event.clone(), || {
            seen_at_start = Some(bus.try_recv().map(|e| (*e).clone()));
        });
        let seen = seen_at_start.unwrap();
        assert_eq!(seen.ok(), Some(event));
    }
}
