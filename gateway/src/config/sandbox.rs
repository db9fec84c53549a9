//! `agents.defaults.sandbox` and `agents.list[].sandbox`: whether `exec` runs under
//! bubblewrap (docs/tools.md, Sandbox), with or without network, and where `bwrap` is.
//! The default is `auto`: every command in bubblewrap wherever it works; where it does
//! not, commands run outside it but every one is asked about.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which sessions' commands run in the sandbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Every session, wherever bubblewrap works; where it does not, commands run outside
    /// it and every one is asked about (the default).
    #[default]
    Auto,
    /// None: commands run on the host as the gateway's user.
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
    /// Default `auto`.
    pub mode: Option<SandboxMode>,
    /// Let sandboxed commands use the network. Default: on under `auto`, off under
    /// `non-main` and `all` (as before `auto` existed); `false` = none, not even 127.0.0.1.
    pub network: Option<bool>,
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
    /// The mode was set in the config (not the default).
    pub explicit: bool,
}

impl SandboxConfig {
    /// The defaults with `agent`'s overrides applied.
    pub fn for_agent(&self, agent: Option<&AgentSandbox>) -> EffectiveSandbox {
        let set = agent.and_then(|a| a.mode).or(self.mode);
        let mode = set.unwrap_or_default();
        EffectiveSandbox {
            mode,
            network: agent
                .and_then(|a| a.network)
                .or(self.network)
                .unwrap_or(mode == SandboxMode::Auto),
            bwrap: self.bwrap.clone().unwrap_or_else(|| PathBuf::from("bwrap")),
            explicit: set.is_some(),
        }
    }
}

impl EffectiveSandbox {
    /// Whether a command of session `session_key` of agent `agent_id` runs sandboxed.
    pub fn applies(&self, agent_id: &str, session_key: &str) -> bool {
        match self.mode {
            SandboxMode::Off => false,
            SandboxMode::All | SandboxMode::Auto => true,
            SandboxMode::NonMain => !crate::session_key::SessionKey::parse(session_key)
                .is_ok_and(|k| k.is_main_of(agent_id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_overrides_the_defaults_field_by_field() {
        let d = SandboxConfig {
            mode: Some(SandboxMode::NonMain),
            network: Some(true),
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

    /// Catches: an empty config still meaning "no sandbox", `auto` without network, or an
    /// old `non-main`/`all` config gaining network it did not have.
    #[test]
    fn the_default_is_auto_with_network_and_old_modes_keep_theirs() {
        let e = SandboxConfig::default().for_agent(None);
        assert_eq!(
            (e.mode, e.network, e.explicit),
            (SandboxMode::Auto, true, false)
        );
        assert!(e.applies("main", "agent:main:main"));
        let old = SandboxConfig {
            mode: Some(SandboxMode::All),
            ..Default::default()
        }
        .for_agent(None);
        assert_eq!(
            (old.mode, old.network, old.explicit),
            (SandboxMode::All, false, true)
        );
        let cut = SandboxConfig {
            network: Some(false),
            ..Default::default()
        }
        .for_agent(None);
        assert!(!cut.network);
    }

    #[test]
    fn non_main_spares_only_the_agent_s_main_session() {
        let e = SandboxConfig {
            mode: Some(SandboxMode::NonMain),
            ..Default::default()
        }
        .for_agent(None);
        assert!(!e.applies("main", "agent:main:main"));
        assert!(e.applies("main", "agent:main:telegram:group:-5"));
        assert!(e.applies("main", "agent:main:dm:42"));
        assert!(e.applies("ops", "agent:main:main"), "another agent's main");
    }
}
