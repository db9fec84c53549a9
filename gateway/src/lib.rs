//! Switchboard: a chat gateway daemon for LLM agents. Channel adapters feed inbound
//! messages through routing into lanes of agent runs; replies, announces and command
//! answers leave through a durable outbox. See ARCHITECTURE.md for the map, docs/internals.md for the detail.
// Audited exceptions: `children::die_with_daemon` (a `pre_exec` hook, which Rust marks
// unsafe) ties child processes to the daemon's life; `children::spawn::raw` starts an
// `exec` command with `clone(CLONE_VM | CLONE_VFORK)` and makes the child's few system
// calls before `exec`; `memory` calls the allocators' release functions (`mi_collect`,
// `malloc_trim`), which take no pointer.
#![deny(unsafe_code)]

pub mod adapters;
pub mod agent;
pub mod agents;
pub mod app;
pub mod channels;
pub mod children;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod cron;
pub mod events;
pub mod latency;
pub mod logging;
pub mod mcp;
pub mod media;
pub mod memory;
pub mod outbox;
#[cfg(test)]
mod proptest_cases;
pub mod queue;
pub mod routing;
pub mod runtime;
pub mod secrets;
pub mod server;
pub mod session_key;
pub mod standby;
pub mod store;
pub mod subagents;
pub mod supervisor;
pub mod text;
