//! `docs/testing.md` names the test that proves each promise: every name it gives must be
//! a test (or module) that exists, so a renamed or deleted test cannot leave a promise
//! looking proven. Run by `cargo test --workspace` (hence by `.ci/run`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The identifiers that follow `keyword ` in `src` (`fn`, `mod`).
fn idents_after<'a>(src: &'a str, keyword: &str) -> Vec<&'a str> {
    let pattern = format!("{keyword} ");
    src.match_indices(pattern.as_str())
        .filter(|(at, _)| {
            // A whole word: the keyword starts the text or follows a non-identifier byte.
            *at == 0
                || !src.as_bytes()[at - 1].is_ascii_alphanumeric() && src.as_bytes()[at - 1] != b'_'
        })
        .filter_map(|(at, _)| {
            let rest = &src[at + pattern.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (end > 0).then(|| &rest[..end])
        })
        .collect()
}

/// The names the doc gives in backticks that look like test paths (`file::test`,
/// `module::path::*`, `channels: module::test`).
fn named_tests(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, span) in doc.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        let name = span.strip_prefix("channels: ").unwrap_or(span);
        let looks_like_path = name.contains("::")
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_:*{},".contains(c));
        // `file::test` is the doc's own placeholder for the naming scheme.
        if looks_like_path && name != "file::test" {
            out.push(name.to_owned());
        }
    }
    out
}

/// The segment that must exist for `name`: its last one, past wildcards and the engine
/// suffixes the store's test macro adds (`::sqlite`, `::{sqlite,postgres}`).
fn key_segment(name: &str) -> Option<&str> {
    name.split("::")
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .find(|s| {
            !(s.is_empty() || *s == "*" || s.starts_with('{') || *s == "sqlite" || *s == "postgres")
        })
}

/// Catches: a test renamed or removed while `docs/testing.md` still names it as the proof
/// of a promise.
#[test]
fn every_test_the_testing_doc_names_exists() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("docs/testing.md")).expect("docs/testing.md");
    let mut files = Vec::new();
    for dir in [
        "gateway/src",
        "channels/src",
        "store/src",
        "tests/src",
        "tests/suite",
        "bench",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut known = BTreeSet::new();
    let mut suite: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Ok(src) = std::fs::read_to_string(file) else {
            continue;
        };
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let fns: BTreeSet<String> = idents_after(&src, "fn")
            .into_iter()
            .map(str::to_owned)
            .collect();
        known.extend(fns.iter().cloned());
        for keyword in ["mod", "struct", "enum", "trait", "const", "macro_rules!"] {
            known.extend(idents_after(&src, keyword).into_iter().map(str::to_owned));
        }
        known.insert(stem.clone());
        if file.parent().is_some_and(|p| p.ends_with("tests/suite")) {
            suite.insert(stem, fns);
        }
    }
    assert!(
        suite.len() > 20,
        "the e2e suite was not found under {}",
        root.display()
    );
    let names = named_tests(&doc);
    assert!(
        names.len() > 100,
        "too few test names found in docs/testing.md: {}",
        names.len()
    );
    let mut missing = Vec::new();
    for name in &names {
        let Some(key) = key_segment(name) else {
            continue;
        };
        let segments: Vec<&str> = name.split("::").collect();
        // `file::test` of the e2e suite: the test must be in that file.
        let found = match (segments.as_slice(), suite.get(segments[0])) {
            // `file::prefix_*`: some test of that file starts so.
            ([_, test], Some(fns)) if test.len() > 1 && test.ends_with('*') => {
                let prefix = test.trim_end_matches('*');
                fns.iter().any(|f| f.starts_with(prefix))
            }
            ([_, test], Some(fns)) if !test.contains('*') && !test.contains('{') => {
                fns.contains(*test)
            }
            _ => known.contains(key),
        };
        if !found {
            missing.push(name.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/testing.md names tests that do not exist (renamed or removed?): {missing:#?}"
    );
}

#[test]
fn names_are_read_from_backticks() {
    let doc = "| a | `webchat::a_test`, `channels: split::tests::*`, `Step::gated`, `x` and `store::tests::engines::t::{sqlite,postgres}` |";
    assert_eq!(
        named_tests(doc),
        [
            "webchat::a_test",
            "split::tests::*",
            "store::tests::engines::t::{sqlite,postgres}"
        ]
    );
    assert_eq!(key_segment("split::tests::*"), Some("tests"));
    assert_eq!(
        key_segment("store::tests::engines::t::{sqlite,postgres}"),
        Some("t")
    );
    assert_eq!(key_segment("a::b::sqlite"), Some("b"));
    let src = "fn alpha() {}\nasync fn beta() {}\nmod gamma;\n// prefn no\n";
    assert_eq!(idents_after(src, "fn"), ["alpha", "beta"]);
}
