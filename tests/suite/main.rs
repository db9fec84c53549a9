//! End-to-end tests: the real `switchboard` binary against fake servers on 127.0.0.1.
#![allow(clippy::unwrap_used)]

mod common;
mod tools_support;

mod api;
mod bad_input;
mod browser;
mod config_reload;
mod discord;
mod lanes;
mod lifecycle;
mod security_http;
mod security_routes;
mod security_ws;
mod subagent_lifecycle;
mod subagents;
mod telegram;
mod tools_approval;
mod tools_exec;
mod tools_fs;
mod tools_message;
mod tools_policy;
mod tools_web;
mod webchat;
