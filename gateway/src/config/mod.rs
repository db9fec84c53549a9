//! Configuration: the JSON5 file's schema, loading with `${VAR}` substitution and strict,
//! every-error validation, path resolution, and hot reload (SPEC §2, §3).
//!
//! Flow: [`parse_config`] (text → [`Config`], or every [`ConfigError`] with key path and
//! line) → the daemon holds an `Arc<Config>` in a `tokio::sync::watch` channel →
//! [`spawn_watcher`] re-reads the file on change and sends what [`plan_reload`] says
//! applies live.

mod channels;
pub mod duration;
mod error;
mod ids;
pub mod limits;
mod load;
mod mcp_cron;
mod paths;
mod reload;
mod schema;
mod source_map;
mod strict;
mod tools;
mod validate;
mod watch;

pub use channels::{
    AccessRules, DiscordConfig, DiscordGuildConfig, DmPolicy, GroupConfig, GroupPolicy, GroupRule,
    TelegramConfig, TelegramMode, ANY_GROUP,
};
pub use error::ConfigError;
pub use load::{load_file, parse_config, process_env, MAX_CONFIG_BYTES, MAX_NESTING};
pub use mcp_cron::*;
pub use paths::Paths;
pub use reload::{plan_reload, ReloadPlan};
pub use schema::*;
pub use tools::*;
pub use watch::{spawn_watcher, SharedEnv};

#[cfg(test)]
mod bounds_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
