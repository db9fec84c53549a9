//! Tests of the registry: the built-ins' tool sets, precedence of the sources, and lookup
//! by id or alias.

use std::path::PathBuf;

use super::*;
use crate::config::{AgentEntry, Config};

fn file(id: &str, aliases: &[&str], desc: &str) -> AgentDef {
    let mut d = AgentDef::bare(id, Source::File(PathBuf::from(format!("/x/{id}.md"))));
    d.aliases = aliases.iter().map(|s| s.to_string()).collect();
    d.description = Some(desc.into());
    d
}

/// The built-in agents' tool sets, table-tested. Catches: `explore` given a tool that
/// changes something, or `plan` given `exec` or a file write.
#[test]
fn builtin_tool_sets() {
    let reg = Registry::build(&Config::default(), vec![], vec![]);
    let table: &[(&str, &str, bool)] = &[
        ("general", "read", true),
        ("general", "write", true),
        ("general", "exec", true),
        ("general", "message", true),
        ("explore", "read", true),
        ("explore", "web_fetch", true),
        ("explore", "ls", true),
        ("explore", "glob", true),
        ("explore", "grep", true),
        ("explore", "web_search", true),
        ("explore", "write", false),
        ("explore", "edit", false),
        ("explore", "apply_patch", false),
        ("explore", "exec", false),
        ("explore", "process", false),
        ("explore", "message", false),
        ("explore", "sessions_spawn", false),
        ("plan", "read", true),
        ("plan", "web_fetch", true),
        ("plan", "ls", true),
        ("plan", "glob", true),
        ("plan", "grep", true),
        ("plan", "sessions_list", true),
        ("plan", "exec", false),
        ("plan", "process", false),
        ("plan", "write", false),
        ("plan", "edit", false),
        ("plan", "apply_patch", false),
    ];
    for (agent, tool, want) in table {
        let def = reg.get(agent).expect("built-in");
        assert_eq!(def.tools.permits(tool), *want, "{agent} / {tool}");
        assert_eq!(def.source, Source::Builtin);
    }
}

#[test]
fn later_sources_win_by_id_and_the_default_agent_is_there() {
    let cfg = Config {
        agents: crate::config::AgentsConfig {
            list: vec![AgentEntry {
                id: "ops".into(),
                description: Some("runs things".into()),
                aliases: vec!["Operator".into()],
                ..Default::default()
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    let reg = Registry::build(
        &cfg,
        vec![
            file("Explore", &[], "first"),
            file("ops", &[], "file ops"),
            file("explore", &["x"], "second"),
        ],
        vec![],
    );
    let ids: Vec<&str> = reg.all().iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["explore", "general", "ops", "plan"]);
    assert_eq!(
        reg.get("explore").and_then(|a| a.description.as_deref()),
        Some("second")
    );
    assert_eq!(reg.get("ops").map(|a| &a.source), Some(&Source::Config));
    assert_eq!(
        reg.get("ops").and_then(|a| a.description.as_deref()),
        Some("runs things")
    );
    assert_eq!(reg.resolve("operator").map(|a| a.id.as_str()), Ok("ops"));
    let empty = Registry::build(&Config::default(), vec![], vec![]);
    assert!(empty.get("main").is_some(), "the implied default agent");
}

/// Catches: an alias or id matched case-sensitively, an alias shadowing an agent's id,
/// or an unknown id's error not listing what is accepted.
#[test]
fn resolves_ids_and_aliases_case_insensitively() {
    let reg = Registry::build(
        &Config::default(),
        vec![
            file("reviewer", &["Rev", "general", "cr"], "a"),
            file("critic", &["cr"], "b"),
        ],
        vec![],
    );
    assert_eq!(
        reg.resolve("REVIEWER").map(|a| a.id.as_str()),
        Ok("reviewer")
    );
    assert_eq!(reg.resolve(" rev ").map(|a| a.id.as_str()), Ok("reviewer"));
    assert_eq!(reg.resolve("General").map(|a| a.id.as_str()), Ok("general"));
    assert_eq!(reg.resolve("CR").map(|a| a.id.as_str()), Ok("critic"));
    let err = reg.resolve("nobody").expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "unknown agent `nobody`; accepted: critic (aliases: cr), explore, general, main, plan, reviewer (aliases: Rev)"
    );
}
