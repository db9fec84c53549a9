//! Tests of `ls`, `glob` and `grep` on a real folder: confinement of what is listed
//! (symlinks out, the gateway's files), `.gitignore` and hidden files, the bounds, and
//! bad patterns.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use tokio_util::sync::CancellationToken;

use super::grep::{grep, Regex};
use super::walk::{glob, ls, NameMatcher};
use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
}

/// A workspace with sources, a .gitignore, hidden files, a binary, symlinks in and out,
/// and the gateway's config file inside it.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ws = root.join("ws");
    let w = |p: &str, body: &[u8]| {
        let path = ws.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    };
    w("src/main.rs", b"fn main() {\n    println!(\"hello\");\n}\n");
    w("src/lib.rs", b"pub fn hello() {}\n// TODO: more\n");
    w("README.md", b"# Project\nhello world\n");
    w(".gitignore", b"target/\n*.log\n");
    w("target/debug/app.rs", b"fn hello() {}\n");
    w("build.log", b"hello from the log\n");
    w(".env", b"SECRET=hello\n");
    w("bin/blob", b"hello\0\x01\x02");
    w("config.json5", b"{ hello: 1 }\n");
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/secret.rs"), "fn hello() {}\n").unwrap();
    std::os::unix::fs::symlink(root.join("outside"), ws.join("out")).unwrap();
    std::os::unix::fs::symlink(root.join("outside/secret.rs"), ws.join("secret.rs")).unwrap();
    std::os::unix::fs::symlink(ws.join("src/lib.rs"), ws.join("lib-link.rs")).unwrap();
    Fixture { _dir: dir, ws }
}

fn scope(f: &Fixture, path: &str) -> Scope {
    Scope {
        ws: f.ws.clone(),
        root: f.ws.join(path),
        only: true,
        own: Own {
            config_file: Some(f.ws.join("config.json5")),
            state_dir: None,
            database: None,
        },
        hidden: false,
        deadline: Instant::now() + Duration::from_secs(60),
        cancel: CancellationToken::new(),
    }
}

fn grep_all(s: &Scope, pattern: &str) -> String {
    grep(s, &Regex::new(pattern, false).unwrap(), None).unwrap()
}

/// Catches: ignored, hidden or gateway files listed, a symlink out of the workspace
/// listed, or entries in an order that changes between calls.
#[test]
fn ls_lists_the_folder_without_ignored_hidden_or_outside_entries() {
    let f = fixture();
    assert_eq!(
        ls(&scope(&f, "."), 1).unwrap(),
        ".:\nREADME.md  22 B\nbin/\nlib-link.rs -> src/lib.rs\nsrc/"
    );
    let mut s = scope(&f, ".");
    s.hidden = true;
    let all = ls(&s, 2).unwrap();
    assert!(
        all.contains("\n.env  13 B\n") && all.contains("\n.gitignore  "),
        "{all}"
    );
    assert!(all.contains("\nsrc/main.rs  "), "{all}");
    assert!(
        !all.contains("target") && !all.contains("build.log"),
        "{all}"
    );
    assert!(
        !all.contains("config.json5") && !all.contains("out"),
        "{all}"
    );
    assert!(ls(&scope(&f, "src/main.rs"), 1).is_err());
}

/// Catches: a glob that follows a symlink out of the workspace, lists ignored files, or
/// reads a pattern without `/` as a whole path.
#[test]
fn glob_matches_names_and_paths_inside_the_workspace_only() {
    let f = fixture();
    let m = |p: &str| NameMatcher::new(p).unwrap();
    assert_eq!(
        glob(&scope(&f, "."), &m("*.rs")).unwrap(),
        "src/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        glob(&scope(&f, "."), &m("src/m*.rs")).unwrap(),
        "src/main.rs"
    );
    assert_eq!(
        glob(&scope(&f, "src"), &m("**/*.rs")).unwrap(),
        "src/lib.rs\nsrc/main.rs"
    );
    assert_eq!(
        glob(&scope(&f, "."), &m("*.log")).unwrap(),
        "no files match"
    );
    assert!(
        matches!(NameMatcher::new("a[b"), Err(ToolError::Model(e)) if e.starts_with("bad glob"))
    );
}

/// Catches: grep reading ignored, hidden, binary or gateway files, or a file through a
/// symlink leading out of the workspace.
#[test]
fn grep_finds_lines_in_the_workspaces_text_files_only() {
    let f = fixture();
    assert_eq!(
        grep_all(&scope(&f, "."), "hello"),
        "README.md:2: hello world\nsrc/lib.rs:1: pub fn hello() {}\nsrc/main.rs:2:     println!(\"hello\");"
    );
    let s = scope(&f, ".");
    let only_rs = grep(
        &s,
        &Regex::new("HELLO", true).unwrap(),
        Some(&NameMatcher::new("main.rs").unwrap()),
    )
    .unwrap();
    assert_eq!(only_rs, "src/main.rs:2:     println!(\"hello\");");
    assert_eq!(
        grep_all(&scope(&f, "src/lib.rs"), "TODO"),
        "src/lib.rs:2: // TODO: more"
    );
    assert_eq!(grep_all(&scope(&f, "."), "nothing here"), "no matches");
}

/// Catches: a bad regular expression answered as a failure of the run instead of an
/// error the model can correct.
#[test]
fn a_bad_regex_is_a_tool_error() {
    match Regex::new("fn (", false) {
        Err(ToolError::Model(e)) => assert!(e.starts_with("bad regular expression:"), "{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    }
    assert!(matches!(
        Regex::new("a\\nb", false),
        Err(ToolError::Model(_))
    ));
}

/// Catches: results without bound (a folder of thousands of files flooding the run) and
/// no word of what was left out.
#[test]
fn results_are_bounded_and_the_rest_counted() {
    let f = fixture();
    let many = f.ws.join("many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..(MAX_ENTRIES + 20) {
        std::fs::write(many.join(format!("f{i:04}.txt")), "x\n".repeat(2)).unwrap();
    }
    let listed = ls(&scope(&f, "many"), 1).unwrap();
    assert_eq!(listed.lines().count(), 1 + MAX_ENTRIES + 1);
    assert!(listed.ends_with("… 20 more entries (narrow the path or the pattern)"));
    let found = grep_all(&scope(&f, "many"), "x");
    assert_eq!(found.lines().count(), MAX_MATCHES + 1);
    assert!(found.ends_with(&format!(
        "… {} more matches (narrow the path or the pattern)",
        2 * (MAX_ENTRIES + 20) - MAX_MATCHES
    )));
    let long = f.ws.join("long.txt");
    std::fs::write(&long, format!("{}\n", "y".repeat(5000))).unwrap();
    let line = grep_all(&scope(&f, "long.txt"), "y");
    assert_eq!(
        line.chars().count(),
        "long.txt:1: ".len() + MAX_LINE_CHARS + 1
    );
}

/// Catches: a search that goes on after the run is cancelled or past its deadline.
#[test]
fn a_cancelled_or_late_search_stops_and_says_so() {
    let f = fixture();
    let s = scope(&f, ".");
    s.cancel.cancel();
    assert_eq!(
        grep_all(&s, "hello"),
        "no matches\n[stopped: the run was cancelled]"
    );
    let mut late = scope(&f, ".");
    late.deadline = Instant::now();
    assert!(ls(&late, 1)
        .unwrap()
        .ends_with("[stopped at the time limit: narrow the path or the pattern]"));
}

proptest! {
    // A tenth of the usual cases: each compiles a regex and a glob.
    #![proptest_config(proptest::test_runner::Config {
        cases: (crate::proptest_cases::cases() / 10).max(100),
        ..crate::proptest_cases::config()
    })]

    /// Catches: a panic on any pattern the model sends; every refusal is a tool error.
    #[test]
    fn any_pattern_compiles_or_is_a_tool_error(p in ".{0,40}", ci in any::<bool>()) {
        if let Err(e) = Regex::new(&p, ci) {
            prop_assert!(matches!(e, ToolError::Model(_)));
        }
        if let Err(e) = NameMatcher::new(&p) {
            prop_assert!(matches!(e, ToolError::Model(_)));
        }
    }
}
