//! Tests of reading agent files into definitions: every field, the comma-separated and
//! list forms, and errors that name the path, line and field.

use super::*;

fn read(text: &str) -> Result<AgentDef, FileError> {
    from_file(PathBuf::from("/a/reviewer.md"), "reviewer", text)
}

#[test]
fn reads_every_field() {
    let def = read(
        "---\nname: rev-1\ndescription: Reviews code\nmodel: openai/gpt-x\ntools: Read, Grep, exec, group:web\n\
         allowAgents: [a, b]\nmaxSteps: 5\ntimeout: 10m\nthinking: high\nisolation: worktree\n\
         aliases:\n  - r\n  - Code.Review\ncolor: blue\n---\nYou review code.\n",
    )
    .expect("valid");
    assert_eq!(
        def,
        AgentDef {
            id: "rev-1".into(),
            description: Some("Reviews code".into()),
            aliases: vec!["r".into(), "Code.Review".into()],
            model: Some("openai/gpt-x".into()),
            tools: ToolSet {
                allow: Some(vec![
                    "read".into(),
                    "read".into(),
                    "exec".into(),
                    "group:web".into()
                ]),
                deny: vec![],
            },
            allow_agents: Some(vec!["a".into(), "b".into()]),
            max_steps: Some(5),
            timeout: Some(Duration::from_secs(600)),
            thinking: Some("high".into()),
            isolation: Some(Isolation::Worktree),
            instructions: Some("You review code.".into()),
            source: Source::File(PathBuf::from("/a/reviewer.md")),
        }
    );
}

#[test]
fn the_file_name_is_the_id_without_a_name_and_inherit_is_no_model() {
    let def = read("---\nmodel: inherit\ntimeout: 90s\ntools: [read]\n---\n").expect("valid");
    assert_eq!(def.id, "reviewer");
    assert_eq!(def.model, None);
    assert_eq!(def.timeout, Some(Duration::from_secs(90)));
    assert_eq!(def.instructions, None);
    assert!(def.tools.permits("read") && !def.tools.permits("exec"));
    // Catches: an empty `tools:` (as other agent tools write "inherit every tool") read as
    // "no tools at all".
    let empty = read("---\ntools:\n---\n").expect("valid");
    assert!(empty.tools.permits("read") && empty.tools.permits("exec"));
    let plain = read("Just instructions.").expect("valid");
    assert_eq!(plain.instructions.as_deref(), Some("Just instructions."));
    assert!(plain.tools.permits("exec"));
}

/// Catches: a bad file reported without its path, line or field (docs/subagents.md: "a bad file is
/// reported with its path, line and field").
#[test]
fn errors_name_the_path_line_and_field() {
    let msg = |t: &str| read(t).expect_err("invalid").to_string();
    assert_eq!(
        msg("---\nname: ok\nmaxSteps: 0\n---\n"),
        "/a/reviewer.md:3: `maxSteps`: must be a whole number from 1 to 1000, got \"0\""
    );
    assert_eq!(
        msg("---\n\ntimeout: forever\n---\n"),
        "/a/reviewer.md:3: `timeout`: must be a duration from 1s to 7days (e.g. \"10m\"), got \"forever\""
    );
    assert_eq!(
        msg("---\ntools: read, frobnicate\n---\n"),
        format!(
            "/a/reviewer.md:2: `tools`: {}",
            check_entry("frobnicate").unwrap_or_default()
        )
    );
    assert_eq!(
        msg("---\nname: a:b\n---\n"),
        "/a/reviewer.md:2: `name`: \"a:b\" is not a valid id (1 to 64 lowercase letters, digits, `_` or `-`, starting with a letter or digit)"
    );
    assert_eq!(
        msg("---\naliases: [ok, \"not ok\"]\n---\n"),
        "/a/reviewer.md:2: `aliases`: \"not ok\" is not a valid alias (1 to 64 letters, digits, `_`, `-`, `.`)"
    );
    assert!(msg("---\ntimeout: 90\n---\n")
        .starts_with("/a/reviewer.md:2: `timeout`: must be a duration"));
    assert_eq!(
        msg("---\nisolation: jail\n---\n"),
        "/a/reviewer.md:2: `isolation`: must be \"none\" or \"worktree\", got \"jail\""
    );
    assert_eq!(
        msg("---\nmodel: [a]\n---\n"),
        "/a/reviewer.md:2: `model`: must be a single value, not a list"
    );
    assert_eq!(
        msg("---\nname: x\n"),
        "/a/reviewer.md:1: the front matter has no closing `---` line"
    );
    assert_eq!(
        from_file(PathBuf::from("/a/my agent.md"), "my agent", "hi")
            .expect_err("invalid")
            .to_string(),
        "/a/my agent.md:1: `name`: no `name`, and the file name \"my agent\" is not a valid id"
    );
}

/// Catches: an id the config would refuse (upper case, a dot) becoming part of session keys.
#[test]
fn valid_ids_and_aliases() {
    for ok in ["a", "a1", "explore", "code-review", "x_y", &"a".repeat(64)] {
        assert!(valid_id(ok), "{ok}");
    }
    for bad in [
        "",
        "-a",
        "A1",
        "a.b",
        "a:b",
        "a b",
        "é",
        &"a".repeat(65),
        "a/b",
    ] {
        assert!(!valid_id(bad), "{bad}");
    }
    for ok in ["Rev", "code.review", "A-1"] {
        assert!(valid_alias(ok), "{ok}");
    }
    for bad in ["", ".a", "a:b", "a b", &"a".repeat(65)] {
        assert!(!valid_alias(bad), "{bad}");
    }
}
