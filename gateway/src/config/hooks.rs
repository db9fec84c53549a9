//! The `hooks` section of the config: commands or HTTP endpoints told of sub-agent
//! lifecycle events (`SubagentStart`, `SubagentStop`); run by `subagents/hooks.rs`,
//! checked in `validate/hooks.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::duration;

/// Hook lists by event. The keys are spelled as other agent tools spell them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// Run before a child is created; a command that exits non-zero (or outlives its
    /// timeout) refuses the spawn, its stderr being the reason the model is given.
    #[serde(rename = "SubagentStart")]
    pub subagent_start: Vec<HookEntry>,
    /// Run after a child's run ended (beside its announce, never delaying it).
    #[serde(rename = "SubagentStop")]
    pub subagent_stop: Vec<HookEntry>,
}

/// One hook: `command` (a shell line, the JSON payload on its stdin) or `url` (an HTTP
/// POST of the same JSON), not both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct HookEntry {
    /// Run by `/bin/sh -c` in the agent's workspace, with a built environment (as
    /// `exec`'s: no keys or tokens), in its own process group.
    pub command: Option<String>,
    pub url: Option<String>,
    /// Headers of the POST (e.g. `Authorization`).
    pub headers: BTreeMap<String, String>,
    /// Longest run of the command or the HTTP call (1s..10m); then it is killed.
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub timeout: Duration,
}

impl Default for HookEntry {
    fn default() -> Self {
        HookEntry {
            command: None,
            url: None,
            headers: BTreeMap::new(),
            timeout: DEFAULT_HOOK_TIMEOUT,
        }
    }
}

/// A hook's timeout when none is given.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// The range of a hook's timeout.
pub const MIN_HOOK_TIMEOUT: Duration = Duration::from_secs(1);
pub const MAX_HOOK_TIMEOUT: Duration = Duration::from_secs(600);
