//! Which tools a run is offered (docs/tools.md): the profile, then `tools.allow`/`tools.deny`,
//! then the agent's own `agents.list[].tools`, then, for sub-agents, the session tools
//! removed and `tools.subagents.tools`. Every stage may only remove tools; a deny
//! anywhere wins. Also the exec policy in force for an agent (`ExecPolicy`).

use crate::config::{entry_matches, AgentEntry, Config, ExecAsk, ExecSecurity};

/// Tools sub-agents never get (README, Sub-agents).
pub const SUBAGENT_FORBIDDEN: &[&str] = &[
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "agents_list",
    "subagents",
    "task",
    // A scheduled job outlives the sub-agent's task and would act for its requester's
    // chat long after: only a main run, for its own chat, makes jobs.
    "cron",
];

/// Tools only sub-agents get (a main run has no requester to report to).
pub const SUBAGENT_ONLY: &[&str] = &["progress"];

/// Whether `tool` is offered to a run of `agent` under `cfg`.
pub fn allowed(cfg: &Config, agent: Option<&AgentEntry>, is_subagent: bool, tool: &str) -> bool {
    if !is_subagent && SUBAGENT_ONLY.contains(&tool) {
        return false;
    }
    let agent_tools = agent.and_then(|a| a.tools.as_ref());
    let profile = agent_tools
        .and_then(|t| t.profile)
        .unwrap_or(cfg.tools.profile);
    if let Some(base) = profile.allows() {
        if !base.iter().any(|e| entry_matches(e, tool)) {
            return false;
        }
    }
    if !stage(cfg.tools.allow.as_deref(), &cfg.tools.deny, tool) {
        return false;
    }
    if let Some(t) = agent_tools {
        if !stage(t.allow.as_deref(), &t.deny, tool) {
            return false;
        }
    }
    if is_subagent {
        let sub = &cfg.tools.subagents.tools;
        if SUBAGENT_FORBIDDEN.contains(&tool) || !stage(sub.allow.as_deref(), &sub.deny, tool) {
            return false;
        }
    }
    true
}

/// One allow/deny stage: not denied, and allowed when there is an allow list.
fn stage(allow: Option<&[String]>, deny: &[String], tool: &str) -> bool {
    !deny.iter().any(|d| entry_matches(d, tool))
        && allow.is_none_or(|a| a.iter().any(|e| entry_matches(e, tool)))
}

/// The exec settings in force for one agent: the global `tools.exec`, with the agent's
/// `agents.list[].tools.exec` keys replacing the ones it sets.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecPolicy {
    pub security: ExecSecurity,
    pub ask: ExecAsk,
    /// Entries of resolved executable paths (globs), each optionally followed by
    /// argument patterns (`exec::allow::config_entry_covers`).
    pub allowlist: Vec<String>,
}

/// What the policy says about one command, given which of its executables the allowlists
/// cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecDecision {
    Run,
    Ask,
    Refuse,
}

impl ExecPolicy {
    pub fn resolve(cfg: &Config, agent: Option<&AgentEntry>) -> ExecPolicy {
        let own = agent.and_then(|a| a.tools.as_ref()).map(|t| &t.exec);
        ExecPolicy {
            security: own
                .and_then(|e| e.security)
                .unwrap_or(cfg.tools.exec.security),
            ask: own.and_then(|e| e.ask).unwrap_or(cfg.tools.exec.ask),
            allowlist: own
                .and_then(|e| e.allowlist.clone())
                .unwrap_or_else(|| cfg.tools.exec.allowlist.clone()),
        }
    }

    /// Whether a command runs, needs asking, or is refused; `covered`: whether every
    /// executable in it is known and allowed (by the globs or a stored allow-always).
    pub fn decide(&self, covered: bool) -> ExecDecision {
        match (self.security, self.ask) {
            (ExecSecurity::Deny, _) => ExecDecision::Refuse,
            (_, ExecAsk::Always) => ExecDecision::Ask,
            (ExecSecurity::Full, _) => ExecDecision::Run,
            (ExecSecurity::Allowlist, _) if covered => ExecDecision::Run,
            (ExecSecurity::Allowlist, ExecAsk::OnMiss) => ExecDecision::Ask,
            (ExecSecurity::Allowlist, ExecAsk::Off) => ExecDecision::Refuse,
        }
    }

    /// Whether the configured entries cover `path` (a resolved executable path) run with
    /// `args`.
    pub fn config_allows(&self, path: &str, args: &[String]) -> bool {
        self.allowlist
            .iter()
            .any(|e| super::exec::allow::config_entry_covers(e, path, args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AgentExecConfig, AgentToolsConfig, ToolProfile};

    fn cfg(v: serde_json::Value) -> Config {
        crate::config::parse_config(&v.to_string(), &|_| None).unwrap_or_else(|e| panic!("{e:?}"))
    }

    const ALL: &[&str] = &[
        "read",
        "write",
        "edit",
        "exec",
        "process",
        "web_fetch",
        "message",
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "sessions_spawn",
        "agents_list",
    ];

    fn offered(c: &Config, agent: Option<&AgentEntry>, sub: bool) -> Vec<&'static str> {
        ALL.iter()
            .copied()
            .filter(|t| allowed(c, agent, sub, t))
            .collect()
    }

    /// Table of policies and the tools each offers (main run, then sub-agent run).
    /// Catches: any stage of the resolution skipped or applied as "add" instead of
    /// "remove", deny not winning, sub-agents keeping the session tools.
    #[test]
    fn policy_resolution_table() {
        let fs_rt = ["read", "write", "edit", "exec", "process"];
        let sessions = [
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "agents_list",
        ];
        let coding: Vec<&str> = fs_rt.iter().chain(sessions.iter()).copied().collect();
        let table: Vec<(serde_json::Value, Vec<&str>, Vec<&str>)> = vec![
            (
                serde_json::json!({}),
                ALL.to_vec(),
                vec![
                    "read",
                    "write",
                    "edit",
                    "exec",
                    "process",
                    "web_fetch",
                    "message",
                ],
            ),
            (
                serde_json::json!({"tools": {"profile": "minimal"}}),
                vec![],
                vec![],
            ),
            (
                serde_json::json!({"tools": {"profile": "coding"}}),
                coding,
                fs_rt.to_vec(),
            ),
            (
                serde_json::json!({"tools": {"profile": "messaging"}}),
                vec![
                    "message",
                    "sessions_list",
                    "sessions_history",
                    "sessions_send",
                ],
                vec!["message"],
            ),
            (
                serde_json::json!({"tools": {"allow": ["group:fs", "exec"], "deny": ["write"]}}),
                vec!["read", "edit", "exec"],
                vec!["read", "edit", "exec"],
            ),
            (
                serde_json::json!({"tools": {"profile": "coding", "allow": ["web_fetch", "read"]}}),
                vec!["read"],
                vec!["read"],
            ),
            (
                serde_json::json!({"tools": {"deny": ["sessions_*", "group:runtime"]}}),
                vec![
                    "read",
                    "write",
                    "edit",
                    "web_fetch",
                    "message",
                    "agents_list",
                ],
                vec!["read", "write", "edit", "web_fetch", "message"],
            ),
            (
                serde_json::json!({"tools": {"subagents": {"tools": {"allow": ["read", "exec", "sessions_list"], "deny": ["exec"]}}}}),
                ALL.to_vec(),
                vec!["read"],
            ),
        ];
        for (json, main, sub) in table {
            let c = cfg(json.clone());
            assert_eq!(offered(&c, None, false), main, "main run under {json}");
            assert_eq!(offered(&c, None, true), sub, "sub-agent run under {json}");
        }
    }

    #[test]
    fn an_agent_s_own_policy_applies_after_the_global_one() {
        let c = cfg(serde_json::json!({"tools": {"deny": ["message"]}}));
        let agent = AgentEntry {
            id: "ops".into(),
            tools: Some(AgentToolsConfig {
                profile: Some(ToolProfile::Coding),
                allow: None,
                deny: vec!["group:sessions".into()],
                exec: AgentExecConfig::default(),
            }),
            ..AgentEntry::default()
        };
        assert_eq!(
            offered(&c, Some(&agent), false),
            vec!["read", "write", "edit", "exec", "process"]
        );
        let agent = AgentEntry {
            tools: Some(AgentToolsConfig {
                allow: Some(vec!["message".into(), "read".into()]),
                ..AgentToolsConfig::default()
            }),
            ..agent
        };
        assert_eq!(
            offered(&c, Some(&agent), false),
            vec!["read"],
            "the global deny wins"
        );
    }

    #[test]
    fn exec_decisions() {
        use ExecAsk::*;
        use ExecDecision::*;
        use ExecSecurity::*;
        let table = [
            (Deny, Always, true, Refuse),
            (Full, Off, false, Run),
            (Full, OnMiss, false, Run),
            (Full, Always, true, Ask),
            (Allowlist, Off, true, Run),
            (Allowlist, Off, false, Refuse),
            (Allowlist, OnMiss, false, Ask),
            (Allowlist, OnMiss, true, Run),
            (Allowlist, Always, true, Ask),
        ];
        for (security, ask, covered, want) in table {
            let p = ExecPolicy {
                security,
                ask,
                allowlist: vec![],
            };
            assert_eq!(p.decide(covered), want, "{security:?} {ask:?} {covered}");
        }
        let c = cfg(serde_json::json!({"tools": {"exec": {"allowlist": ["/usr/bin/*"]}}}));
        let agent = AgentEntry {
            tools: Some(AgentToolsConfig {
                exec: AgentExecConfig {
                    ask: Some(Off),
                    ..AgentExecConfig::default()
                },
                ..AgentToolsConfig::default()
            }),
            ..AgentEntry::default()
        };
        let p = ExecPolicy::resolve(&c, Some(&agent));
        assert_eq!((p.security, p.ask), (Allowlist, Off));
        assert!(p.config_allows("/usr/bin/git", &[]) && !p.config_allows("/bin/git", &[]));
    }

    /// Catches: `progress` offered to a main run (it has no requester), or kept from the
    /// children of the profiles and lists that should give it to them.
    #[test]
    fn progress_is_for_children_only_and_filtered_like_any_tool() {
        let table = [
            (serde_json::json!({}), true),
            (serde_json::json!({"tools": {"profile": "coding"}}), true),
            (serde_json::json!({"tools": {"profile": "messaging"}}), true),
            (serde_json::json!({"tools": {"profile": "minimal"}}), false),
            (
                serde_json::json!({"tools": {"deny": ["group:sessions"]}}),
                false,
            ),
            (
                serde_json::json!({"tools": {"subagents": {"tools": {"deny": ["progress"]}}}}),
                false,
            ),
        ];
        for (v, child) in table {
            let c = cfg(v.clone());
            assert!(!allowed(&c, None, false, "progress"), "main run, {v}");
            assert_eq!(allowed(&c, None, true, "progress"), child, "child, {v}");
        }
    }
}
