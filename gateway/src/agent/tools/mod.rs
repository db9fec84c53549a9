//! Tools the model can call: the [`Tool`] trait, the registry of built-ins, and the
//! per-agent tool policy (allow/deny, sub-agent restrictions).

pub mod args;
mod sessions;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::provider::ToolSpec;
use crate::config::ToolsConfig;
use crate::runtime::Runtime;

/// Tools sub-agents never get (SPEC §7).
pub const SUBAGENT_FORBIDDEN: &[&str] = &[
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "agents_list",
];

/// What a tool call may use.
pub struct ToolContext<'a> {
    pub rt: &'a Arc<Runtime>,
    pub session_key: &'a str,
    pub agent_id: &'a str,
    pub run_id: &'a str,
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

impl From<crate::store::StoreError> for ToolError {
    fn from(e: crate::store::StoreError) -> Self {
        ToolError::Fatal(e.to_string())
    }
}

#[async_trait]
pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    async fn call(
        &self,
        ctx: &ToolContext<'_>,
        args: serde_json::Value,
    ) -> Result<String, ToolError>;
}

/// Every built-in tool, by name.
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    /// The specs of each set of tools a run was given (by their names): building the
    /// JSON schemas was a few percent of the daemon's CPU per turn. Sets are few (one
    /// per tool policy in force).
    specs: Mutex<HashMap<Vec<String>, Arc<[ToolSpec]>>>,
}

impl ToolRegistry {
    pub fn builtin() -> Self {
        let mut r = ToolRegistry {
            tools: BTreeMap::new(),
            specs: Mutex::default(),
        };
        r.add(Arc::new(sessions::SessionsList));
        r.add(Arc::new(sessions::SessionsHistory));
        r.add(Arc::new(sessions::SessionsSend));
        for t in crate::subagents::spawn::tools() {
            r.add(t);
        }
        r
    }

    pub fn add(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
    }

    /// The tools an agent run may use under `cfg`. For sub-agents the session tools are
    /// removed, then `tools.subagents.tools` applies (allow-only if set; deny wins).
    /// The specs of `tools` (a run's, from [`Self::for_run`]), shared by its model calls.
    pub fn specs(&self, tools: &BTreeMap<String, Arc<dyn Tool>>) -> Arc<[ToolSpec]> {
        let names: Vec<String> = tools.keys().cloned().collect();
        let mut cached = self.specs.lock().unwrap_or_else(|e| e.into_inner());
        cached
            .entry(names)
            .or_insert_with(|| tools.values().map(|t| t.spec()).collect())
            .clone()
    }

    pub fn for_run(&self, cfg: &ToolsConfig, is_subagent: bool) -> BTreeMap<String, Arc<dyn Tool>> {
        self.tools
            .iter()
            .filter(|(name, _)| {
                let name = name.as_str();
                if cfg.deny.iter().any(|d| d == name) {
                    return false;
                }
                if cfg
                    .allow
                    .as_ref()
                    .is_some_and(|a| !a.iter().any(|x| x == name))
                {
                    return false;
                }
                if is_subagent {
                    let sub = &cfg.subagents.tools;
                    if SUBAGENT_FORBIDDEN.contains(&name) || sub.deny.iter().any(|d| d == name) {
                        return false;
                    }
                    if sub
                        .allow
                        .as_ref()
                        .is_some_and(|a| !a.iter().any(|x| x == name))
                    {
                        return false;
                    }
                }
                true
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{SubagentToolsConfig, ToolPolicy};

    fn names(m: &BTreeMap<String, Arc<dyn Tool>>) -> Vec<&str> {
        m.keys().map(String::as_str).collect()
    }

    #[test]
    fn a_tool_set_s_specs_are_built_once() {
        let reg = ToolRegistry::builtin();
        let cfg = ToolsConfig::default();
        let main = reg.for_run(&cfg, false);
        let a = reg.specs(&main);
        let b = reg.specs(&reg.for_run(&cfg, false));
        assert!(Arc::ptr_eq(&a, &b));
        let names: Vec<&str> = a.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, self::names(&main));
        assert!(reg.specs(&reg.for_run(&cfg, true)).is_empty());
    }

    #[test]
    fn subagents_lose_session_tools_and_deny_wins() {
        let reg = ToolRegistry::builtin();
        let cfg = ToolsConfig::default();
        assert_eq!(
            names(&reg.for_run(&cfg, false)),
            vec![
                "agents_list",
                "sessions_history",
                "sessions_list",
                "sessions_send",
                "sessions_spawn"
            ]
        );
        assert!(reg.for_run(&cfg, true).is_empty());
        let cfg = ToolsConfig {
            allow: Some(vec!["sessions_list".into(), "sessions_send".into()]),
            deny: vec!["sessions_send".into()],
            subagents: SubagentToolsConfig {
                tools: ToolPolicy::default(),
            },
        };
        assert_eq!(names(&reg.for_run(&cfg, false)), vec!["sessions_list"]);
    }
}
