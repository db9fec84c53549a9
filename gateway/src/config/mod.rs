//! Configuration: the JSON5 file's schema, loading with `${VAR}` substitution and strict,
//! every-error validation, path resolution, and hot reload (README, Configuration; and
//! Paths).
//!
//! Flow: [`parse_config`] (text → [`Config`], or every [`ConfigError`] with key path and
//! line) → the daemon holds an `Arc<Config>` in a `tokio::sync::watch` channel →
//! [`spawn_watcher`] re-reads the file on change and sends what [`plan_reload`] says
//! applies live.

mod agents;
pub mod budget;
mod channels;
pub mod context;
pub mod cron_job;
mod db_url;
pub mod duration;
pub mod edit;
mod error;
pub mod hooks;
mod ids;
mod json_schema;
pub mod limits;
pub(crate) mod load;
mod mcp_cron;
pub mod media;
pub mod models;
pub mod origin;
mod paths;
pub mod redact;
mod reload;
mod sandbox;
pub mod schedule;
mod schema;
pub(crate) mod source_map;
mod strict;
pub mod thinking;
mod tools;
mod validate;
mod watch;

pub use agents::{agent_entry, default_agent_id, workspace_for, DEFAULT_AGENT};
pub use channels::{
    Access, AccessRules, ChannelSection, DiscordConfig, DiscordGuildConfig, DmAccess, DmPolicy,
    GroupConfig, GroupPolicy, GroupRule, Owners, TelegramConfig, TelegramMode, WebchatConfig,
    ANY_GROUP,
};
pub use db_url::{is_postgres_url, redact_url};
pub use error::ConfigError;
pub use json_schema::json_schema;
pub use load::{load_file, parse_config, process_env, MAX_CONFIG_BYTES, MAX_NESTING};
pub use mcp_cron::*;
pub use media::{MediaConfig, ModelInput};
pub use models::{AgentModel, ModelChain};
pub use paths::{lexical, Paths};
pub use reload::{plan_reload, ReloadPlan};
pub use sandbox::*;
pub use schema::*;
pub use tools::*;
pub use validate::workspace_issues;
pub use watch::{spawn_watcher, SharedEnv};

#[cfg(test)]
mod bounds_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
