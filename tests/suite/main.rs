//! End-to-end tests: the real `switchboard` binary against fake servers on 127.0.0.1.
#![allow(clippy::unwrap_used)]

mod common;

mod api;
mod bad_input;
mod browser;
mod config_reload;
mod discord;
mod faults_channels;
mod faults_model;
mod faults_restart;
mod http_limits;
mod lanes;
mod lifecycle;
mod security_http;
mod security_routes;
mod security_ws;
mod subagent_lifecycle;
mod subagents;
mod telegram;
mod telegram_faults;
mod webchat;
