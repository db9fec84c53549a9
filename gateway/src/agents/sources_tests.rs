//! Tests of the agent folders: reading order, bad files skipped with their path and the
//! others kept, and the catalog noticing edits.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::config::Config;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join(name), text).expect("write");
}

/// Catches: one bad file taking the other agents down with it, or a later folder not
/// winning over an earlier one.
#[test]
fn bad_files_are_skipped_and_later_folders_win() {
    let state = tempfile::tempdir().expect("tmp");
    let cfg = Config::default();
    let dirs = dirs(&cfg, state.path());
    assert_eq!(dirs[0], state.path().join("agents"));
    assert_eq!(dirs[1], state.path().join("workspace/.claude/agents"));
    assert_eq!(dirs[2], state.path().join("workspace/.switchboard/agents"));
    write(&dirs[0], "a.md", "---\ndescription: from state\n---\nA");
    write(&dirs[0], "bad.md", "---\nmaxSteps: lots\n---\n");
    write(&dirs[0], "notes.txt", "not an agent");
    write(&dirs[1], "a.md", "---\ndescription: from claude\n---\nA2");
    write(&dirs[2], "b.md", "---\nname: bee\naliases: [b]\n---\n");
    let (defs, errors) = load(&dirs);
    let got: Vec<(&str, Option<&str>)> = defs
        .iter()
        .map(|d| (d.id.as_str(), d.description.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("a", Some("from state")),
            ("a", Some("from claude")),
            ("bee", None)
        ]
    );
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path, dirs[0].join("bad.md"));
    assert_eq!(
        (errors[0].line, errors[0].field.as_deref()),
        (2, Some("maxSteps"))
    );
    let reg = Registry::build(&cfg, defs, errors);
    assert_eq!(
        reg.get("a").and_then(|a| a.description.as_deref()),
        Some("from claude")
    );
}

/// Catches: an edited, added or removed agent file not reaching the registry without a
/// restart (hot reload).
#[test]
fn the_catalog_sees_edits() {
    let state = tempfile::tempdir().expect("tmp");
    let cfg = Arc::new(Config::default());
    let dir = state.path().join("agents");
    let catalog = Catalog::new(state.path().to_path_buf(), Duration::ZERO);
    assert!(catalog.registry(&cfg).get("x").is_none());
    write(&dir, "x.md", "---\ndescription: one\n---\n");
    let first = catalog.registry(&cfg);
    assert_eq!(
        first.get("x").and_then(|a| a.description.as_deref()),
        Some("one")
    );
    assert!(
        Arc::ptr_eq(&first, &catalog.registry(&cfg)),
        "unchanged: not rebuilt"
    );
    write(&dir, "x.md", "---\ndescription: two, longer\n---\n");
    assert_eq!(
        catalog
            .registry(&cfg)
            .get("x")
            .and_then(|a| a.description.as_deref()),
        Some("two, longer")
    );
    write(&dir, "x.md", "---\nmaxSteps: 0\n---\n");
    let bad = catalog.registry(&cfg);
    assert!(bad.get("x").is_none());
    assert_eq!(bad.errors.len(), 1);
    std::fs::remove_file(dir.join("x.md")).expect("rm");
    assert!(catalog.registry(&cfg).errors.is_empty());
}

/// Catches: an agent file in the workspace (which the agent's own file tools can write)
/// redefining the default agent, a built-in or an operator's file, while the operator's
/// own files (the state dir) may, and the workspace may still add agents.
#[test]
fn workspace_files_add_agents_but_do_not_redefine_them() {
    let state = tempfile::tempdir().expect("tmp");
    let cfg = Arc::new(Config::default());
    let dirs = dirs(&cfg, state.path());
    write(&dirs[0], "ops.md", "---\ndescription: operator's\n---\n");
    write(
        &dirs[0],
        "plan.md",
        "---\ndescription: operator's plan\n---\n",
    );
    write(&dirs[1], "main.md", "---\ndescription: taken over\n---\n");
    write(&dirs[1], "Explore.md", "---\ndescription: widened\n---\n");
    write(&dirs[2], "ops.md", "---\ndescription: replaced\n---\n");
    write(&dirs[2], "helper.md", "---\ndescription: new\n---\n");
    let catalog = Catalog::new(state.path().to_path_buf(), Duration::ZERO);
    let reg = catalog.registry(&cfg);
    let description = |id: &str| reg.get(id).and_then(|a| a.description.clone());
    assert_eq!(description("main"), None);
    assert_eq!(
        description("explore").as_deref(),
        Some("Read-only research: reads files and fetches pages, changes nothing.")
    );
    assert_eq!(description("ops").as_deref(), Some("operator's"));
    assert_eq!(description("plan").as_deref(), Some("operator's plan"));
    assert_eq!(description("helper").as_deref(), Some("new"));
    let mut refused: Vec<PathBuf> = reg.errors.iter().map(|e| e.path.clone()).collect();
    refused.sort();
    let mut expected = vec![
        dirs[1].join("Explore.md"),
        dirs[1].join("main.md"),
        dirs[2].join("ops.md"),
    ];
    expected.sort();
    assert_eq!(refused, expected);
}
