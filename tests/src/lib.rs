//! Test kit for Switchboard's end-to-end tests: fake servers on 127.0.0.1 (model, Telegram,
//! Discord, Slack), a harness for the real binary, a WebDriver client for the browser test, and a throwaway
//! PostgreSQL.
pub mod browser;
pub mod fake_discord;
pub mod fake_model;
pub mod fake_slack;
mod fake_support;
pub mod fake_telegram;
pub mod fake_web;
pub mod harness;
#[cfg(test)]
mod layering;
pub mod mcp_server;
pub mod multipart;
#[cfg(test)]
mod one_pick;
pub mod pg;
#[cfg(test)]
mod testing_doc;
pub mod tls_proxy;
