//! `agents.defaults.sandbox` and `agents.list[].sandbox`: whether `exec` runs under
//! bubblewrap (docs/tools.md, Sandbox), with or without network, and where `bwrap` is.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which sessions' commands run in the sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// None (the default).
    #[default]
    Off,
    /// Every session but the agent's main DM session (`agent:<id>:main`): groups, other
    /// people's DMs under a per-sender `dmScope`, sub-agents, cron.
    NonMain,
    /// Every session.
    All,
}

/// `agents.defaults.sandbox`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SandboxConfig {
    pub mode: SandboxMode,
    /// Let sandboxed commands use the network (default: no network at all).
    pub network: bool,
    /// The bubblewrap program: an absolute path, or a name looked up on the gateway's
    /// `PATH`. Default `bwrap`.
    pub bwrap: Option<PathBuf>,
}

/// `agents.list[].sandbox`: this agent's overrides of the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentSandbox {
    pub mode: Option<SandboxMode>,
    pub network: Option<bool>,
}

/// The sandbox settings in force for one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveSandbox {
    pub mode: SandboxMode,
    pub network: bool,
    pub bwrap: PathBuf,
}

impl SandboxConfig {
    /// The defaults with `agent`'s overrides applied.
    pub fn for_agent(&self, agent: Option<&AgentSandbox>) -> EffectiveSandbox {
        EffectiveSandbox {
            mode: agent.and_then(|a| a.mode).unwrap_or(self.mode),
            network: agent.and_then(|a| a.network).unwrap_or(self.network),
            bwrap: self.bwrap.clone().unwrap_or_else(|| PathBuf::from("bwrap")),
        }
    }
}

impl EffectiveSandbox {
    /// Whether a command of session `session_key` of agent `agent_id` runs sandboxed.
    pub fn applies(&self, agent_id: &str, session_key: &str) -> bool {
        match self.mode {
            SandboxMode::Off => false,
            SandboxMode::All => true,
            SandboxMode::NonMain => session_key != format!("agent:{agent_id}:main"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_overrides_the_defaults_field_by_field() {
        let d = SandboxConfig {
            mode: SandboxMode::NonMain,
            network: true,
            bwrap: None,
        };
        let e = d.for_agent(Some(&AgentSandbox {
            mode: Some(SandboxMode::All),
            network: None,
        }));
        assert_eq!(
            (e.mode, e.network, e.bwrap),
            (SandboxMode::All, true, PathBuf::from("bwrap"))
        );
        assert_eq!(d.for_agent(None).mode, SandboxMode::NonMain);
    }

    #[test]
    fn non_main_spares_only_the_agent_s_main_session() {
        let e = SandboxConfig {
            mode: SandboxMode::NonMain,
            ..Default::default()
        }
        .for_agent(None);
        assert!(!e.applies("main", "agent:main:main"));
        assert!(e.applies("main", "agent:main:telegram:group:-5"));
        assert!(e.applies("main", "agent:main:dm:42"));
        assert!(e.applies("ops", "agent:main:main"), "another agent's main");
    }
}
