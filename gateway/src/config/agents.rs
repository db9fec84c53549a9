//! Looking agents up in the config: the default agent, an agent's entry, its workspace.
//! (Below `agent` and `routing`, which both ask.)

use std::path::{Path, PathBuf};

use super::{AgentEntry, Config};

/// Agent id used when the config lists no agents.
pub const DEFAULT_AGENT: &str = "main";

/// The agent that takes messages by default: the one marked `default`, else the first
/// listed, else `main`.
pub fn default_agent_id(cfg: &Config) -> String {
    cfg.agents
        .list
        .iter()
        .find(|a| a.default)
        .or(cfg.agents.list.first())
        .map(|a| a.id.clone())
        .unwrap_or_else(|| DEFAULT_AGENT.to_string())
}

/// The entry of agent `id`, if the config lists it.
pub fn agent_entry(cfg: &Config, id: &str) -> Option<AgentEntry> {
    cfg.agents.list.iter().find(|a| a.id == id).cloned()
}

/// The workspace folder of an agent: its own, else the default, else `<state>/workspace`.
pub fn workspace_for(cfg: &Config, agent: Option<&AgentEntry>, state_dir: &Path) -> PathBuf {
    agent
        .and_then(|a| a.workspace.clone())
        .or_else(|| cfg.agents.defaults.workspace.clone())
        .unwrap_or_else(|| state_dir.join("workspace"))
}
