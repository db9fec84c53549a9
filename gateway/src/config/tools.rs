//! The `tools` section of the config (docs/tools.md): the tool policy (profile, allow/deny with
//! names, `*` globs and groups), the per-tool settings (`fs`, `exec`, `web`, `message`),
//! and the per-agent override under `agents.list[].tools`. The vocabulary of tool names
//! and groups lives here because it is part of the config language; the policy that
//! applies it is `agent::tools::policy`.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::duration;

/// Tool groups usable in `allow`/`deny` lists, and the tools each stands for.
pub const TOOL_GROUPS: &[(&str, &[&str])] = &[
    (
        "group:fs",
        &["read", "write", "edit", "apply_patch", "ls", "glob", "grep"],
    ),
    ("group:runtime", &["exec", "process"]),
    ("group:web", &["web_fetch", "web_search"]),
    (
        "group:sessions",
        &[
            "sessions_list",
            "sessions_history",
            "sessions_send",
            "sessions_spawn",
            "session_status",
            "agents_list",
            "subagents",
            "task",
            "progress",
        ],
    ),
    ("group:messaging", &["message"]),
    ("group:automation", &["cron", "gateway"]),
    // MCP tools are named `mcp__<server>__<tool>` (see `MCP_PREFIX`).
    ("group:mcp", &[]),
];

/// Prefix of the tools that MCP servers bring (`group:mcp`).
pub const MCP_PREFIX: &str = "mcp__";

/// Tool names a policy list may name besides the groups: every built-in and the names of
/// the reference's tools this gateway does not have (yet), so that a config written for
/// it (`deny: ["gateway", "cron"]`) stays valid.
pub const KNOWN_TOOLS: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "exec",
    "process",
    "web_fetch",
    "web_search",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "agents_list",
    "subagents",
    "task",
    "progress",
    "message",
    "cron",
    "gateway",
    "browser",
    "canvas",
    "nodes",
    "image",
    "memory_search",
    "memory_get",
    "ls",
    "glob",
    "grep",
];

/// The tools a group stands for; `None` when `name` is not a group.
pub fn group_members(name: &str) -> Option<&'static [&'static str]> {
    TOOL_GROUPS
        .iter()
        .find(|(g, _)| *g == name)
        .map(|(_, members)| *members)
}

/// Whether a policy entry (a name, a `*` glob or a group) names `tool`.
pub fn entry_matches(entry: &str, tool: &str) -> bool {
    if entry == "group:mcp" {
        return tool.starts_with(MCP_PREFIX);
    }
    if let Some(members) = group_members(entry) {
        return members.contains(&tool);
    }
    if entry.contains('*') {
        return glob_match(entry, tool);
    }
    entry == tool
}

/// `*`-only glob match (`*` = any run of characters, everything else literal).
fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(x) => x,
        None => return text.is_empty(),
    };
    let Some(mut left) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for part in middle {
        match left.find(part) {
            Some(i) => left = &left[i + part.len()..],
            None => return false,
        }
    }
    left.len() >= last.len() && left.ends_with(last)
}

/// Why a policy entry is not valid (`None`: it is fine): an unknown tool or group name,
/// or a glob that can match no known tool.
pub fn check_entry(entry: &str) -> Option<String> {
    if entry.trim().is_empty() {
        return Some("a tool name must not be empty".into());
    }
    if entry.starts_with("group:") {
        return group_members(entry).is_none().then(|| {
            let groups: Vec<&str> = TOOL_GROUPS.iter().map(|(g, _)| *g).collect();
            format!(
                "unknown tool group {entry:?}; groups: {}",
                groups.join(", ")
            )
        });
    }
    if entry.starts_with(MCP_PREFIX) || entry == "*" {
        return None;
    }
    if entry.contains('*') {
        return (!KNOWN_TOOLS.iter().any(|t| glob_match(entry, t)))
            .then(|| format!("{entry:?} matches no known tool"));
    }
    (!KNOWN_TOOLS.contains(&entry)).then(|| {
        format!(
            "unknown tool {entry:?}; known tools: {}",
            KNOWN_TOOLS.join(", ")
        )
    })
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolsConfig {
    /// The base set of tools: `minimal`, `coding`, `messaging` or `full` (default).
    pub profile: ToolProfile,
    /// If set, only these tools (names, `*` globs, groups) are offered.
    pub allow: Option<Vec<String>>,
    /// Never offered (wins over every allow).
    pub deny: Vec<String>,
    pub subagents: SubagentToolsConfig,
    pub fs: FsToolConfig,
    pub exec: ExecToolConfig,
    pub web: WebToolConfig,
    pub message: MessageToolConfig,
    pub sessions: SessionsToolConfig,
}

/// A tool profile: the base set of tools before `allow`/`deny` (the reference's names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolProfile {
    /// No tools: the agent only talks.
    Minimal,
    /// Files, commands and the session tools.
    Coding,
    /// Sending messages and reading sessions.
    Messaging,
    /// Every tool.
    #[default]
    Full,
}

impl ToolProfile {
    /// The entries this profile allows (`None`: everything).
    pub fn allows(self) -> Option<&'static [&'static str]> {
        match self {
            ToolProfile::Minimal => Some(&[]),
            ToolProfile::Coding => Some(&["group:fs", "group:runtime", "group:sessions"]),
            ToolProfile::Messaging => Some(&[
                "group:messaging",
                "progress",
                "sessions_list",
                "sessions_history",
                "sessions_send",
                "session_status",
            ]),
            ToolProfile::Full => None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SubagentToolsConfig {
    pub tools: ToolPolicy,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolPolicy {
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct FsToolConfig {
    /// `read`/`write`/`edit` refuse paths that resolve outside the agent's workspace.
    pub workspace_only: bool,
}

impl Default for FsToolConfig {
    fn default() -> Self {
        FsToolConfig {
            workspace_only: true,
        }
    }
}

/// Which commands `exec` may run without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecSecurity {
    /// `exec` refuses every command.
    Deny,
    /// Commands whose every executable matches the allowlist.
    #[default]
    Allowlist,
    /// Any command.
    Full,
}

/// When `exec` asks the chat before running a command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExecAsk {
    /// Never: a command the security mode does not allow is refused.
    Off,
    /// When the allowlist does not cover the command.
    #[default]
    OnMiss,
    /// Before every command.
    Always,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecToolConfig {
    pub security: ExecSecurity,
    pub ask: ExecAsk,
    /// Globs of resolved executable paths, e.g. `/usr/bin/git`, `/usr/bin/*`.
    pub allowlist: Vec<String>,
    /// Variables added to the (otherwise scrubbed) environment of commands.
    pub env: BTreeMap<String, String>,
    /// How long a request waits for an answer in the chat before it counts as denied.
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub approval_timeout: Duration,
}

impl Default for ExecToolConfig {
    fn default() -> Self {
        ExecToolConfig {
            security: ExecSecurity::default(),
            ask: ExecAsk::default(),
            allowlist: Vec::new(),
            env: BTreeMap::new(),
            approval_timeout: Duration::from_secs(600),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct WebToolConfig {
    pub fetch: WebFetchConfig,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct WebFetchConfig {
    /// Host names (or IP literals) `web_fetch` may reach even when they resolve to a
    /// loopback, private, link-local or metadata address.
    pub allow_hosts: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct MessageToolConfig {
    /// Old key: `true` is read as `allowTargets: ["*"]` (logged once at start).
    pub allow_any_chat: bool,
    /// Chats `message` (and a `cron` job's `deliver`) may write to besides the run's own
    /// chat: `"<channel>:<chatId>"` (e.g. `"telegram:-1001234"`), or `"*"` for any chat.
    pub allow_targets: Vec<String>,
}

impl MessageToolConfig {
    /// Whether a run may write to `channel` chat `chat_id`, which is not its own chat.
    pub fn allows(&self, channel: &str, chat_id: &str) -> bool {
        self.allow_any_chat
            || self.allow_targets.iter().any(|t| {
                t == "*"
                    || t.split_once(':')
                        .is_some_and(|(c, id)| c == channel && id == chat_id)
            })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionsToolConfig {
    /// Which sessions `sessions_list`, `sessions_history` and `sessions_send` see.
    pub visibility: SessionVisibility,
}

/// Which sessions a run's session tools see.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionVisibility {
    /// The run's own session and the sessions of its sub-agents.
    #[default]
    Own,
    /// Every session of the run's agent.
    Agent,
    /// Every session.
    All,
}

/// `agents.list[].tools`: the same policy keys for one agent, applied after the global ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentToolsConfig {
    /// Replaces `tools.profile` for this agent.
    pub profile: Option<ToolProfile>,
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
    pub exec: AgentExecConfig,
}

/// `agents.list[].tools.exec`: each key set replaces the global one for this agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentExecConfig {
    pub security: Option<ExecSecurity>,
    pub ask: Option<ExecAsk>,
    pub allowlist: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_names_globs_and_groups() {
        let cases = [
            ("read", "read", true),
            ("read", "write", false),
            ("group:fs", "edit", true),
            ("group:fs", "exec", false),
            ("group:mcp", "mcp__github__issues", true),
            ("group:mcp", "exec", false),
            ("sessions_*", "sessions_spawn", true),
            ("*", "anything", true),
            ("*_list", "agents_list", true),
            ("*_list", "agents_lists", false),
            ("s*s*s", "sessions", true),
            ("a*a", "a", false),
        ];
        for (entry, tool, want) in cases {
            assert_eq!(entry_matches(entry, tool), want, "{entry} vs {tool}");
        }
    }

    /// The exec defaults of an empty config: ask on a miss of the allowlist, an empty
    /// allowlist, and ten minutes for an answer. Catches: a default that runs commands
    /// unasked, or a request that waits for ever.
    #[test]
    fn exec_defaults_ask_and_expire_after_ten_minutes() {
        let cfg = crate::config::parse_config("{}", &|_| None).unwrap_or_else(|e| panic!("{e:?}"));
        let exec = &cfg.tools.exec;
        assert_eq!(
            (exec.security, exec.ask, exec.allowlist.len()),
            (ExecSecurity::Allowlist, ExecAsk::OnMiss, 0)
        );
        assert_eq!(exec.approval_timeout, Duration::from_secs(600));
    }

    #[test]
    fn unknown_entries_are_named() {
        assert_eq!(check_entry("read"), None);
        assert_eq!(check_entry("cron"), None);
        assert_eq!(check_entry("group:web"), None);
        assert_eq!(check_entry("mcp__x__y"), None);
        assert_eq!(check_entry("web_*"), None);
        assert!(check_entry("group:nope").is_some_and(|m| m.starts_with("unknown tool group")));
        assert!(check_entry("reed").is_some_and(|m| m.starts_with("unknown tool \"reed\"")));
        assert!(check_entry("zz*").is_some_and(|m| m.contains("matches no known tool")));
    }

    /// Catches: a target matched on its channel or chat alone, `"*"` not meaning every
    /// chat, or the old `allowAnyChat` no longer honoured.
    #[test]
    fn message_targets_match_channel_and_chat() {
        let mut m = MessageToolConfig {
            allow_any_chat: false,
            allow_targets: vec!["telegram:-100".into()],
        };
        assert!(m.allows("telegram", "-100"));
        assert!(!m.allows("telegram", "-1000"));
        assert!(!m.allows("discord", "-100"));
        m.allow_targets = vec!["*".into()];
        assert!(m.allows("discord", "5"));
        m.allow_targets.clear();
        assert!(!m.allows("discord", "5"));
        m.allow_any_chat = true;
        assert!(m.allows("discord", "5"));
    }
}
