//! "A model is picked one way" (ARCHITECTURE.md, Invariants), checked: in the gateway's
//! code (test files aside) only `agent/models.rs` builds a provider or a `ResolvedModel`,
//! and only it and the config's own validation read an agent's primary and fallbacks. A
//! run, an announce, `/model`, `/compact`, `/usage` and the doctor all go through
//! `models::resolve_for` / `models::resolve`, so none can pick a model its own way.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every non-test `.rs` file under `dir`, with its path relative to `base`.
fn code_files(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                code_files(base, &path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            let rel = path
                .strip_prefix(base)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.push((rel, text));
        }
    }
}

/// The files whose code (outside `//` comments) contains `needle`.
fn files_with(files: &[(String, String)], needle: &str) -> Vec<String> {
    files
        .iter()
        .filter(|(_, text)| {
            text.lines().any(|line| {
                let code = line.split("//").next().unwrap_or_default();
                // A definition, a signature or an impl names the type without building it.
                code.contains(needle)
                    && !["struct ", "impl ", "fn ", "->"]
                        .iter()
                        .any(|d| code.contains(d))
            })
        })
        .map(|(rel, _)| rel.clone())
        .collect()
}

/// Catches: a second place that builds a provider or reads an agent's model chain, so a
/// run, an announce or a command could pick a different model than `/model` shows.
#[test]
fn a_model_is_picked_in_one_place() {
    let src = root().join("gateway/src");
    let mut files = Vec::new();
    code_files(&src, &src, &mut files);
    assert!(files.len() > 100, "gateway/src read: {} files", files.len());

    let one = ["agent/models.rs".to_owned()];
    assert_eq!(files_with(&files, "provider::build("), one);
    assert_eq!(files_with(&files, "ResolvedModel {"), one);
    for reader in [".primary()", ".fallbacks()"] {
        let found: Vec<_> = files_with(&files, reader)
            .into_iter()
            .filter(|f| !f.starts_with("config/"))
            .collect();
        assert_eq!(found, one, "`{reader}` outside agent/models.rs and config/");
    }
}
