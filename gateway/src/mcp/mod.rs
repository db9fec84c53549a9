//! MCP servers as tools (docs/tools.md, MCP servers): the hub that starts one supervisor
//! per configured server (`server`), connects over stdio or streamable HTTP (`connect`),
//! offers each server tool to the model as `mcp__<server>__<tool>` (`names`, `tool`) and
//! turns its results into tool results (`result`).
//!
//! Servers start in the background: nothing waits for them before serving. A server's
//! tools are offered only while it is connected. A config reload starts, stops or
//! restarts only the servers whose section changed.

mod connect;
pub mod names;
mod result;
mod server;
mod tool;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use connect::MAX_MESSAGE;
pub use server::{ServerStatus, State};

use crate::agent::tools::{Tool, ToolProvider};
use crate::config::{Config, McpServerConfig};
use crate::runtime::EnvKeys;
use server::{Slot, Supervised};

/// A running server's supervisor and the section it was started with.
struct Running {
    section: McpServerConfig,
    cancel: CancellationToken,
    slot: Arc<Slot>,
}

/// What the hub needs to start supervisors (given once, by `app`).
pub struct HubContext {
    /// Owner of the supervisor tasks.
    pub tasks: TaskTracker,
    /// Parent of every supervisor's token: fired at shutdown.
    pub cancel: CancellationToken,
    pub state_dir: PathBuf,
    pub keys: EnvKeys,
    /// The daemon's environment (for `PATH`, `HOME`, `LANG`, and to know its secrets).
    pub host_env: crate::config::SharedEnv,
}

/// Every configured MCP server, by name.
#[derive(Default)]
pub struct McpHub {
    context: OnceLock<HubContext>,
    servers: Mutex<BTreeMap<String, Running>>,
    /// Configured with `enabled: false`.
    disabled: Mutex<Vec<String>>,
    generation: Arc<AtomicU64>,
}

impl McpHub {
    /// Start serving: from now on [`Self::apply`] starts supervisors.
    pub fn start(&self, context: HubContext, cfg: &Config) {
        if self.context.set(context).is_err() {
            tracing::warn!("mcp: the hub was started twice");
        }
        self.apply(cfg);
    }

    /// Bring the servers in line with `cfg`: start new ones, stop removed or disabled
    /// ones, restart those whose section changed; leave the others alone.
    pub fn apply(&self, cfg: &Config) {
        let Some(ctx) = self.context.get() else {
            return;
        };
        let wanted = &cfg.mcp.servers;
        let mut servers = self.servers.lock();
        let gone: Vec<String> = servers
            .iter()
            .filter(|(name, r)| wanted.get(*name) != Some(&r.section))
            .map(|(name, _)| name.clone())
            .collect();
        for name in gone {
            if let Some(old) = servers.remove(&name) {
                tracing::info!(server = %name, "mcp: stopping (config changed)");
                old.cancel.cancel();
            }
        }
        for (name, section) in wanted {
            if !section.enabled || servers.contains_key(name) {
                continue;
            }
            let slot = Slot::new(name, section);
            let cancel = ctx.cancel.child_token();
            let supervised = Supervised {
                cfg: section.clone(),
                env: crate::agent::tools::exec::env::for_server(
                    cfg,
                    &ctx.keys,
                    ctx.host_env.as_ref(),
                    &section.env,
                ),
                state_dir: ctx.state_dir.clone(),
                generation: self.generation.clone(),
                tasks: ctx.tasks.clone(),
            };
            ctx.tasks
                .spawn(server::supervise(slot.clone(), supervised, cancel.clone()));
            tracing::info!(server = %name, "mcp: starting");
            servers.insert(
                name.clone(),
                Running {
                    section: section.clone(),
                    cancel,
                    slot,
                },
            );
        }
        // A stopped server's tools go with it.
        self.generation.fetch_add(1, Ordering::SeqCst);
        *self.disabled.lock() = wanted
            .iter()
            .filter(|(_, s)| !s.enabled)
            .map(|(n, _)| n.clone())
            .collect();
    }

    /// Every configured server: the running ones with their state, then the disabled ones.
    pub fn status(&self) -> (Vec<ServerStatus>, Vec<String>) {
        let running = self
            .servers
            .lock()
            .values()
            .map(|r| r.slot.status())
            .collect();
        (running, self.disabled.lock().clone())
    }
}

impl ToolProvider for McpHub {
    fn tools(&self) -> Vec<(String, Arc<dyn Tool>)> {
        let servers = self.servers.lock();
        servers.values().flat_map(|r| r.slot.tools()).collect()
    }
}

/// One line per server for `/status`: `name (stdio): ready, 3 tools` and the like.
pub fn status_lines(hub: &McpHub) -> Vec<String> {
    let (running, disabled) = hub.status();
    let mut lines: Vec<String> = running
        .iter()
        .map(|s| {
            let mut line = format!(
                "{} ({}): {}, {} tool{}",
                s.name,
                s.transport,
                s.state.as_str(),
                s.tools.len(),
                if s.tools.len() == 1 { "" } else { "s" }
            );
            if s.restarts > 0 {
                line.push_str(&format!(
                    ", {} restart{}",
                    s.restarts,
                    if s.restarts == 1 { "" } else { "s" }
                ));
            }
            if s.state != State::Ready {
                if let Some(e) = &s.last_error {
                    line.push_str(&format!(" (last error: {})", cut(e, 120)));
                }
            }
            line
        })
        .collect();
    lines.extend(disabled.iter().map(|n| format!("{n}: disabled")));
    lines
}

/// `s` cut to `max` characters (with `…`).
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A `/metrics` series: name, Prometheus type, how to read it from a server's status.
type Series = (&'static str, &'static str, fn(&ServerStatus) -> u64);

/// The servers' series for `/metrics`: whether each is up, its tools, its restarts.
pub fn metrics(hub: &McpHub, out: &mut String) {
    use std::fmt::Write;
    let (running, _) = hub.status();
    let series: [Series; 3] = [
        ("switchboard_mcp_server_up", "gauge", |s| {
            u64::from(s.state == State::Ready)
        }),
        ("switchboard_mcp_server_tools", "gauge", |s| {
            s.tools.len() as u64
        }),
        ("switchboard_mcp_server_restarts_total", "counter", |s| {
            s.restarts
        }),
    ];
    for (name, kind, f) in series {
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for s in &running {
            let _ = writeln!(out, "{name}{{server=\"{}\"}} {}", s.name, f(s));
        }
    }
}
