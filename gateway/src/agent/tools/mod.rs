//! Tools the model can call: the [`Tool`] trait, the registry of built-ins, the dispatch of
//! one call (name lookup, argument parsing), and the per-run tool policy (`policy`).
//!
//! Built-ins: the session tools (`sessions`), `read`/`write`/`edit` (`fs`), `ls`/`glob`/
//! `grep` (`search`), `exec`
//! (`exec/`) and `process` (`process`), `web_fetch` (`web_fetch`), `message` (`message`),
//! `progress` for sub-agents (`progress`).
//! Exec approvals (durable requests answered with `/approve`) are in `approvals`.

pub mod approvals;
pub mod args;
mod beneath;
pub mod exec;
pub(crate) mod fs;
pub(crate) mod message;
pub mod outgoing;
mod paths;
pub mod policy;
pub mod process;
mod search;
mod sessions;
pub mod web_fetch;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::provider::{ToolSpec, ToolSpecs};
use crate::config::{AgentEntry, Config};
use crate::runtime::Runtime;
use crate::store::{Store, StoreError, ToolCallRecord};

pub(crate) use args::{opt_arg, str_arg};
pub use policy::SUBAGENT_FORBIDDEN;

/// What a tool call may use.
pub struct ToolContext<'a> {
    pub rt: &'a Arc<Runtime>,
    /// The config the run was set up with.
    pub cfg: &'a Config,
    /// The run's agent entry (`None`: an agent with no entry in `agents.list`).
    pub agent: Option<&'a AgentEntry>,
    /// The agent's workspace folder (file tools and `exec` work inside it).
    pub workspace: &'a Path,
    pub session_key: &'a str,
    pub agent_id: &'a str,
    pub run_id: &'a str,
    /// The id of this tool call (what makes a re-executed call idempotent).
    pub call_id: &'a str,
    pub is_subagent: bool,
    pub cancel: CancellationToken,
    /// Where this run's answers go (the requester origin of a spawn).
    pub origin: Option<&'a switchboard_channels::Origin>,
}

/// A tool failure. `Model` errors go back to the model as the tool result so it can
/// correct itself; `Fatal` errors end the run.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    Model(String),
    #[error("{0}")]
    Fatal(String),
}

impl From<super::AgentError> for ToolError {
    fn from(e: super::AgentError) -> Self {
        ToolError::Fatal(e.to_string())
    }
}

impl From<crate::store::StoreError> for ToolError {
    fn from(e: crate::store::StoreError) -> Self {
        ToolError::Fatal(e.to_string())
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// Which version of a changing tool set this tool belongs to (an MCP server's tool
    /// list, re-read when it changes); built-ins never change. Part of the spec cache key.
    fn generation(&self) -> u64 {
        0
    }
    async fn call(
        &self,
        ctx: &ToolContext<'_>,
        args: serde_json::Value,
    ) -> Result<String, ToolError>;
    /// Whether consecutive calls of this tool in one answer run at once (each waits on
    /// something of its own, as `task` waits for its child); other calls run one by one.
    fn concurrent(&self) -> bool {
        false
    }
    /// Of `open` (calls of this tool that a restart left without a result in run
    /// `run_id`), those it takes up again instead of failing them (`task`: the calls whose
    /// child exists). None by default.
    async fn resumable(
        &self,
        _store: &Store,
        _run_id: &str,
        _open: &[ToolCallRecord],
    ) -> Result<Vec<ToolCallRecord>, StoreError> {
        Ok(Vec::new())
    }
}

/// Tools that come and go while the daemon runs (MCP servers' tools), consulted by
/// [`ToolRegistry::for_run`] next to the built-ins.
pub trait ToolProvider: Send + Sync {
    /// The tools offered right now, by name.
    fn tools(&self) -> Vec<(String, Arc<dyn Tool>)>;
}

/// A tool set: its names, each with its tool's generation.
type SpecKey = Vec<(String, u64)>;

/// Most tool sets whose specs are kept (one per tool policy and tool list in force).
const MAX_SPEC_SETS: usize = 64;

/// Every built-in tool, by name, and the state some of them share.
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    /// Extra tools (MCP), filtered by the same policy.
    provider: Option<Arc<dyn ToolProvider>>,
    /// The specs of each set of tools a run was given (by their names and generations):
    /// building the JSON schemas was a few percent of the daemon's CPU per turn. Sets are
    /// few (one per tool policy in force and MCP tool list).
    specs: Mutex<HashMap<SpecKey, Arc<ToolSpecs>>>,
    /// Background commands (`exec` with `background`, `process`).
    pub processes: Arc<process::Processes>,
    /// Runs waiting on an exec approval, woken by `/approve`.
    pub approvals: Arc<approvals::ApprovalHub>,
}

/// The built-in tools, with no provider: what a runtime whose `app` added nothing offers.
impl Default for ToolRegistry {
    fn default() -> Self {
        ToolRegistry::builtin()
    }
}

impl ToolRegistry {
    pub fn builtin() -> Self {
        let processes = Arc::new(process::Processes::default());
        let mut r = ToolRegistry {
            tools: BTreeMap::new(),
            provider: None,
            specs: Mutex::default(),
            processes: processes.clone(),
            approvals: Arc::default(),
        };
        r.add(Arc::new(sessions::SessionsList));
        r.add(Arc::new(sessions::SessionsHistory));
        r.add(Arc::new(sessions::SessionsSend));
        r.add(Arc::new(fs::Read));
        r.add(Arc::new(fs::Write));
        r.add(Arc::new(fs::Edit));
        r.add(Arc::new(search::Ls));
        r.add(Arc::new(search::Glob));
        r.add(Arc::new(search::Grep));
        r.add(Arc::new(exec::Exec::new(processes.clone())));
        r.add(Arc::new(process::ProcessTool::new(processes)));
        r.add(Arc::new(web_fetch::WebFetch));
        r.add(Arc::new(message::Message));
        r
    }

    /// The registry with `provider`'s tools offered next to the built-ins.
    pub fn with_provider(mut self, provider: Arc<dyn ToolProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    pub fn add(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
    }

    /// The specs of `tools` (a run's, from [`Self::for_run`]), shared by its model calls.
    pub fn specs(&self, tools: &BTreeMap<String, Arc<dyn Tool>>) -> Arc<ToolSpecs> {
        let key: SpecKey = tools
            .iter()
            .map(|(k, t)| (k.clone(), t.generation()))
            .collect();
        let mut cached = self.specs.lock();
        if cached.len() >= MAX_SPEC_SETS && !cached.contains_key(&key) {
            cached.clear();
        }
        cached
            .entry(key)
            .or_insert_with(|| {
                Arc::new(tools.values().map(|t| t.spec()).collect::<Vec<_>>().into())
            })
            .clone()
    }

    /// The tools a run of `agent` may use under `cfg` (see `policy`): a denied tool is
    /// not offered at all.
    pub fn for_run(
        &self,
        cfg: &Config,
        agent: Option<&AgentEntry>,
        is_subagent: bool,
    ) -> BTreeMap<String, Arc<dyn Tool>> {
        let mut out: BTreeMap<String, Arc<dyn Tool>> = self
            .tools
            .iter()
            .filter(|(name, _)| policy::allowed(cfg, agent, is_subagent, name))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(provider) = &self.provider {
            for (name, tool) in provider.tools() {
                if policy::allowed(cfg, agent, is_subagent, &name) {
                    // A built-in keeps its name (provider names are `mcp__…`).
                    out.entry(name).or_insert(tool);
                }
            }
        }
        out
    }
}

/// Execute one tool call of a run that was offered `tools`: bad names and bad arguments
/// are told to the model.
pub async fn dispatch(
    tools: &BTreeMap<String, Arc<dyn Tool>>,
    call: &ToolCallRecord,
    ctx: &ToolContext<'_>,
) -> Result<String, ToolError> {
    if ctx.is_subagent && SUBAGENT_FORBIDDEN.contains(&call.name.as_str()) {
        return Err(ToolError::Model(format!(
            "forbidden: sub-agents cannot use `{}`",
            call.name
        )));
    }
    if !ctx.is_subagent && policy::SUBAGENT_ONLY.contains(&call.name.as_str()) {
        return Err(ToolError::Model(format!(
            "`{}` is only for sub-agents (it reports to the chat of the agent that started \
             them); answer the user directly instead",
            call.name
        )));
    }
    let Some(tool) = tools.get(&call.name) else {
        let available: Vec<&str> = tools.keys().map(String::as_str).collect();
        return Err(ToolError::Model(format!(
            "unknown tool `{}`; available tools: {}",
            call.name,
            if available.is_empty() {
                "none".to_string()
            } else {
                available.join(", ")
            }
        )));
    };
    let args: Value = if call.arguments.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&call.arguments).map_err(|e| {
            ToolError::Model(format!(
                "the arguments of `{}` are not valid JSON ({e}); send a JSON object",
                call.name
            ))
        })?
    };
    if !args.is_object() {
        return Err(ToolError::Model(format!(
            "the arguments of `{}` must be a JSON object",
            call.name
        )));
    }
    tool.call(ctx, args).await
}

#[cfg(test)]
mod provider_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn names(m: &BTreeMap<String, Arc<dyn Tool>>) -> Vec<&str> {
        m.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_tool_set_s_specs_are_built_once() {
        let reg = ToolRegistry::builtin();
        let cfg = Config::default();
        let main = reg.for_run(&cfg, None, false);
        let a = reg.specs(&main);
        let b = reg.specs(&reg.for_run(&cfg, None, false));
        assert!(Arc::ptr_eq(&a, &b));
        let names: Vec<&str> = a.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, self::names(&main));
        let sub = reg.specs(&reg.for_run(&cfg, None, true));
        assert!(sub
            .iter()
            .all(|s| !SUBAGENT_FORBIDDEN.contains(&s.name.as_str())));
    }
}
