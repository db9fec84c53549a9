//! The `mcp` and `cron` sections of the config (docs/tools.md, MCP servers and scheduled
//! jobs): MCP servers whose tools agents get (`mcp.servers.<name>`: a command over stdio or
//! a streamable HTTP URL), and scheduled jobs (`cron.jobs[]`) run on the `cron` lane. Their
//! checks are in `validate/mcp_cron.rs`, their ranges in `limits.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::duration;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct McpConfig {
    /// By name: the name is the middle of its tools' names (`mcp__<name>__<tool>`).
    pub servers: BTreeMap<String, McpServerConfig>,
}

/// One MCP server: `command` (stdio) or `url` (streamable HTTP), not both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct McpServerConfig {
    /// The program to start (looked up in `PATH`); MCP runs over its stdin and stdout.
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Added to the server's environment, which is otherwise only `PATH`, `HOME` and
    /// `LANG` (never the daemon's own keys and tokens).
    pub env: BTreeMap<String, String>,
    /// Working directory of the command (default: the state dir).
    pub cwd: Option<PathBuf>,
    /// A streamable HTTP endpoint, e.g. `https://example.com/mcp`.
    pub url: Option<String>,
    /// Headers sent with every HTTP request (e.g. `Authorization`).
    pub headers: BTreeMap<String, String>,
    pub enabled: bool,
    /// Longest wait for one tool call (and for the server's start handshake).
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub timeout: Duration,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
            timeout: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CronConfig {
    /// Cap of the `cron` lane: jobs running at once.
    pub max_concurrent: u32,
    /// Shortest time between two runs of a job the `cron` tool made (a run's jobs are
    /// bounded; the jobs written here by the operator are not).
    #[serde(with = "duration")]
    #[schemars(with = "String")]
    pub min_interval: Duration,
    pub jobs: Vec<CronJobConfig>,
}

/// Default of `cron.minInterval`.
pub const DEFAULT_MIN_INTERVAL: Duration = Duration::from_secs(5 * 60);

impl Default for CronConfig {
    fn default() -> Self {
        CronConfig {
            max_concurrent: 1,
            min_interval: DEFAULT_MIN_INTERVAL,
            jobs: Vec::new(),
        }
    }
}

/// A job of the config file (synced into the job table on load and reload).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CronJobConfig {
    /// Stable id: letters, digits, `-` and `_`.
    pub id: String,
    /// Shown as the heading of its answers (default: the id).
    pub name: Option<String>,
    pub schedule: ScheduleConfig,
    /// Default: the default agent.
    pub agent_id: Option<String>,
    /// What the agent is told each time.
    pub message: String,
    pub session: CronSession,
    /// Where the answer goes; without it, the answer stays in the job's session.
    pub deliver: Option<DeliverConfig>,
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Exactly one of `cron` (with an optional `tz`), `every` or `at`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ScheduleConfig {
    /// A cron expression, e.g. `"0 9 * * 1-5"` (minute hour day month weekday).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// IANA time zone of `cron`, e.g. `"Europe/Paris"` (default UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// A fixed interval, e.g. `"30m"` (at least 1s).
    #[serde(with = "duration::option", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub every: Option<Duration>,
    /// One run at this RFC 3339 time, e.g. `"2026-12-01T09:00:00Z"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// Which session a job's turn runs in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CronSession {
    /// A session of its own: `agent:<id>:cron:<jobId>`.
    #[default]
    Isolated,
    /// The agent's main session (`agent:<id>:main`), with its conversation.
    Main,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DeliverConfig {
    /// `telegram`, `discord` or `webchat`.
    pub channel: String,
    #[serde(deserialize_with = "super::ids::one")]
    #[schemars(with = "super::ids::IdSchema")]
    pub chat_id: String,
    #[serde(
        deserialize_with = "super::ids::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<super::ids::IdSchema>")]
    pub thread_id: Option<String>,
}
