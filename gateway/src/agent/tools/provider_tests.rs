//! Tests of the registry's extra tools (MCP servers' tools): filtered by the same policy
//! as built-ins, globs and `group:mcp` included, per agent and for sub-agents; the spec
//! cache keyed by each tool's generation.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{json, Value};

use super::*;

struct Fake {
    name: String,
    generation: u64,
}

#[async_trait]
impl Tool for Fake {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: format!("generation {}", self.generation),
            parameters: json!({"type": "object"}),
        }
    }

    fn generation(&self) -> u64 {
        self.generation
    }

    async fn call(&self, _ctx: &ToolContext<'_>, _args: Value) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

/// A provider whose list can be replaced, like an MCP server's after `list_changed`.
#[derive(Default)]
struct Provider {
    names: Mutex<Vec<String>>,
    generation: AtomicU64,
}

impl ToolProvider for Provider {
    fn tools(&self) -> Vec<(String, Arc<dyn Tool>)> {
        let generation = self.generation.load(Ordering::SeqCst);
        self.names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|n| {
                let t: Arc<dyn Tool> = Arc::new(Fake {
                    name: n.clone(),
                    generation,
                });
                (n.clone(), t)
            })
            .collect()
    }
}

fn cfg(v: Value) -> Config {
    crate::config::parse_config(&v.to_string(), &|_| None).unwrap_or_else(|e| panic!("{e:?}"))
}

fn mcp_names(m: &BTreeMap<String, Arc<dyn Tool>>) -> Vec<&str> {
    m.keys()
        .map(String::as_str)
        .filter(|n| n.starts_with("mcp__") || *n == "read")
        .collect()
}

/// Catches: MCP tools escaping `tools.deny` globs, an agent's own allow list, or the
/// sub-agents' `group:mcp` deny; a provider tool shadowing a built-in.
#[test]
fn provider_tools_follow_the_policy() {
    let provider = Arc::new(Provider::default());
    *provider.names.lock().unwrap_or_else(|e| e.into_inner()) = vec![
        "mcp__github__create_issue".into(),
        "mcp__github__list".into(),
        "mcp__fs__read".into(),
        "read".into(),
    ];
    let reg = ToolRegistry::builtin().with_provider(provider);
    let c = cfg(json!({
        "tools": {"deny": ["mcp__github__c*"], "subagents": {"tools": {"deny": ["group:mcp"]}}},
        "agents": {"list": [{"id": "narrow", "tools": {"allow": ["read", "mcp__github__*"]}}]},
    }));
    let all = reg.for_run(&c, None, false);
    assert_eq!(
        mcp_names(&all),
        vec!["mcp__fs__read", "mcp__github__list", "read"]
    );
    assert_eq!(
        all.get("read").map(|t| t.spec().description),
        reg.tools.get("read").map(|t| t.spec().description),
        "the built-in keeps its name"
    );
    let narrow = crate::routing::agent_entry(&c, "narrow");
    let agent = reg.for_run(&c, narrow.as_ref(), false);
    assert_eq!(mcp_names(&agent), vec!["mcp__github__list", "read"]);
    let sub = reg.for_run(&c, None, true);
    assert_eq!(mcp_names(&sub), vec!["read"]);
}

/// A new tool list under the same names (a server re-listed its tools) gets new specs.
/// Catches: a spec cache keyed by names only, serving a stale schema after
/// `tools/list_changed`.
#[test]
fn the_spec_cache_follows_the_tool_generation() {
    let provider = Arc::new(Provider::default());
    *provider.names.lock().unwrap_or_else(|e| e.into_inner()) = vec!["mcp__s__t".into()];
    let reg = ToolRegistry::builtin().with_provider(provider.clone());
    let c = Config::default();
    let desc = |specs: &Arc<ToolSpecs>| {
        specs
            .iter()
            .find(|s| s.name == "mcp__s__t")
            .map(|s| s.description.clone())
    };
    let a = reg.specs(&reg.for_run(&c, None, false));
    let b = reg.specs(&reg.for_run(&c, None, false));
    assert!(Arc::ptr_eq(&a, &b), "one generation: built once");
    provider.generation.store(1, Ordering::SeqCst);
    let d = reg.specs(&reg.for_run(&c, None, false));
    assert_eq!(desc(&a).as_deref(), Some("generation 0"));
    assert_eq!(desc(&d).as_deref(), Some("generation 1"));
}
