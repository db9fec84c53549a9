//! The agents in force: built-ins, then agent files, then `agents.list`, later winning by
//! id; lookup by id or alias, case-insensitive, with a typed error listing what is
//! accepted.

use std::sync::Arc;

use thiserror::Error;

use super::definition::{AgentDef, FileError, Source, ToolSet};
use crate::config::{self, Config};

/// Tools of the built-in `explore` agent: reading and looking around only (and its
/// progress line).
pub const EXPLORE_TOOLS: &[&str] = &[
    "read",
    "ls",
    "glob",
    "grep",
    "web_fetch",
    "web_search",
    "progress",
];
/// What the built-in `plan` agent may not use: commands and file writes.
pub const PLAN_DENY: &[&str] = &["group:runtime", "write", "edit", "apply_patch"];

/// The built-in agents: `general` (every tool the policy allows), `explore` (read-only
/// tools) and `plan` (no `exec`, no writes).
pub fn builtins() -> Vec<AgentDef> {
    let strings = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut general = AgentDef::bare("general", Source::Builtin);
    general.description = Some("General-purpose agent for multi-step tasks.".into());
    let mut explore = AgentDef::bare("explore", Source::Builtin);
    explore.description =
        Some("Read-only research: reads files and fetches pages, changes nothing.".into());
    explore.tools = ToolSet {
        allow: Some(strings(EXPLORE_TOOLS)),
        deny: Vec::new(),
    };
    explore.instructions = Some(
        "You explore and report. You cannot change files or run commands; say what you found and where."
            .into(),
    );
    let mut plan = AgentDef::bare("plan", Source::Builtin);
    plan.description =
        Some("Plans changes without making them: no commands, no file writes.".into());
    plan.tools = ToolSet {
        allow: None,
        deny: strings(PLAN_DENY),
    };
    plan.instructions = Some(
        "You plan. Do not change anything: produce a step-by-step plan with the files and risks involved."
            .into(),
    );
    vec![general, explore, plan]
}

/// An `agentId` that names no agent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown agent `{given}`; accepted: {}", accepted.join(", "))]
pub struct UnknownAgent {
    pub given: String,
    /// Each agent as `id` or `id (aliases: a, b)`.
    pub accepted: Vec<String>,
}

/// The agents in force, sorted by id, and the agent files that were skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    agents: Vec<Arc<AgentDef>>,
    pub errors: Vec<FileError>,
}

impl Registry {
    /// Built-ins, then `files` in order, then `agents.list` (and the default agent, when
    /// nothing else defines it); a later definition replaces an earlier one of the same id
    /// (case-insensitive). An alias that is another agent's id is dropped (ids win); of two
    /// agents with the same alias, the later keeps it.
    pub fn build(cfg: &Config, files: Vec<AgentDef>, errors: Vec<FileError>) -> Registry {
        fn put(agents: &mut Vec<AgentDef>, def: AgentDef) {
            agents.retain(|a| !a.id.eq_ignore_ascii_case(&def.id));
            agents.push(def);
        }
        let mut agents: Vec<AgentDef> = Vec::new();
        for def in builtins().into_iter().chain(files) {
            put(&mut agents, def);
        }
        for entry in &cfg.agents.list {
            let mut def = AgentDef::bare(&entry.id, Source::Config);
            def.description = entry.description.clone();
            def.aliases = entry.aliases.clone();
            put(&mut agents, def);
        }
        let default = config::default_agent_id(cfg);
        if !agents.iter().any(|a| a.id.eq_ignore_ascii_case(&default)) {
            put(&mut agents, AgentDef::bare(&default, Source::Config));
        }
        // Aliases: ids win; a later agent takes an alias from an earlier one.
        let ids: Vec<String> = agents.iter().map(|a| a.id.to_ascii_lowercase()).collect();
        let mut taken: Vec<String> = Vec::new();
        for a in agents.iter_mut().rev() {
            a.aliases.retain(|al| {
                let low = al.to_ascii_lowercase();
                if ids.contains(&low) || taken.contains(&low) {
                    tracing::warn!(agent = %a.id, alias = %al, "alias dropped: it names another agent or is taken by a later one");
                    false
                } else {
                    taken.push(low);
                    true
                }
            });
        }
        agents.sort_by(|a, b| a.id.cmp(&b.id));
        Registry {
            agents: agents.into_iter().map(Arc::new).collect(),
            errors,
        }
    }

    pub fn all(&self) -> &[Arc<AgentDef>] {
        &self.agents
    }

    /// The agent with exactly this id.
    pub fn get(&self, id: &str) -> Option<&Arc<AgentDef>> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// The agent `name` names, by id or alias, ignoring ASCII case.
    pub fn resolve(&self, name: &str) -> Result<&Arc<AgentDef>, UnknownAgent> {
        let name = name.trim();
        self.agents
            .iter()
            .find(|a| a.id.eq_ignore_ascii_case(name))
            .or_else(|| {
                self.agents
                    .iter()
                    .find(|a| a.aliases.iter().any(|al| al.eq_ignore_ascii_case(name)))
            })
            .ok_or_else(|| UnknownAgent {
                given: name.to_string(),
                accepted: self.agents.iter().map(|a| describe(a)).collect(),
            })
    }
}

/// `id` or `id (aliases: a, b)`.
pub fn describe(a: &AgentDef) -> String {
    if a.aliases.is_empty() {
        a.id.clone()
    } else {
        format!("{} (aliases: {})", a.id, a.aliases.join(", "))
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
