//! End-to-end tests: the real `switchboard` binary against fake servers on 127.0.0.1.
#![allow(clippy::unwrap_used)]

mod common;
mod tools_support;

mod access;
mod agents_models;
mod api;
mod bad_input;
mod browser;
mod config_reload;
mod cron;
mod discord;
mod discord_delivery;
mod faults_channels;
mod faults_model;
mod faults_restart;
mod lanes;
mod lifecycle;
mod mcp;
mod mcp_everything;
mod record;
mod run_limits;
mod security_http;
mod security_routes;
mod security_ws;
mod subagent_announce;
mod subagent_commands;
mod subagent_lifecycle;
mod subagents;
mod telegram;
mod telegram_faults;
mod tools_approval;
mod tools_exec;
mod tools_fs;
mod tools_message;
mod tools_policy;
mod tools_web;
mod webchat;
