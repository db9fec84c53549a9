//! The gateway's layering, checked: ARCHITECTURE.md's "Layers" section puts every top-level
//! module of `gateway/src` on a floor, and a module may use its own floor and those below,
//! never one above. This reads every `crate::<module>` path in the gateway's code (comments
//! and test files left out: tests may reach up, as a crate's dev-dependencies may) and fails
//! on an import that runs up unless `tests/layering-debt.txt` lists it, and on a listed one
//! that is gone, so the list only shrinks. Run by `cargo test --workspace` (hence `.ci/run`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The repository's root (this crate is `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Module → floor (0 is the lowest), from ARCHITECTURE.md's numbered list under `## Layers`:
/// each item names its modules in backticks before its ` — `.
fn floors(architecture: &str) -> Result<BTreeMap<String, usize>, String> {
    let section = architecture
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .ok_or("ARCHITECTURE.md has no `## Layers` section")?;
    let mut floors = BTreeMap::new();
    let mut floor = 0;
    for line in section.lines() {
        let Some((number, rest)) = line.split_once(". ") else {
            continue;
        };
        if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let names = rest.split(" — ").next().unwrap_or_default();
        for (i, name) in names.split('`').enumerate() {
            if i % 2 == 1 && floors.insert(name.to_owned(), floor).is_some() {
                return Err(format!("`{name}` is on two floors"));
            }
        }
        floor += 1;
    }
    if floors.is_empty() {
        return Err("the `## Layers` section lists no floor".into());
    }
    Ok(floors)
}

/// The gateway's top-level modules: its files and folders under `src`.
fn top_modules(src: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(src).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            out.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs").filter(|s| !s.ends_with("_tests")) {
            out.insert(stem.to_owned());
        }
    }
    for root_only in ["main", "lib", "proptest_cases"] {
        out.remove(root_only);
    }
    out
}

/// Every `.rs` file under `dir`, recursively, that is not a test file (`tests.rs`,
/// `*_tests.rs`, or anything under a `tests/` folder).
fn code_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                code_files(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

/// The modules `src` names as `crate::<module>`, outside `//` comments.
fn used_modules(src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in src.lines() {
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        for (at, _) in code.match_indices("crate::") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue; // `switchboard_crate::` and the like
            }
            let rest = &code[at + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if end > 0 {
                out.insert(rest[..end].to_owned());
            }
        }
    }
    out
}

/// `file -> module` for every import in the gateway's code that runs up a floor.
fn upward_imports(
    src: &Path,
    floors: &BTreeMap<String, usize>,
) -> Result<BTreeSet<String>, String> {
    let mut files = Vec::new();
    code_files(src, &mut files);
    let mut out = BTreeSet::new();
    for file in files {
        let rel = file
            .strip_prefix(src)
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .into_owned();
        let top = rel
            .split('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".rs");
        let Some(&own) = floors.get(top) else {
            continue; // main.rs, lib.rs: the crate's root wires everything
        };
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{rel}: {e}"))?;
        for used in used_modules(&text) {
            if floors.get(&used).is_some_and(|&floor| floor > own) {
                out.insert(format!("{rel} -> {used}"));
            }
        }
    }
    Ok(out)
}

/// The imports known to run up, to be removed: `tests/layering-debt.txt`, one
/// `file -> module` per line, `#` comments.
fn debt(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Catches: a module that imports one on a floor above it (a circle in the making), a
/// module nobody placed on a floor, and a debt entry already paid but still listed.
#[test]
fn no_module_imports_one_above_it() {
    let root = root();
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let floors = floors(&architecture).expect("the layers");
    let src = root.join("gateway/src");

    let unplaced: Vec<_> = top_modules(&src)
        .into_iter()
        .filter(|m| !floors.contains_key(m))
        .collect();
    assert!(
        unplaced.is_empty(),
        "put these modules of gateway/src on a floor in ARCHITECTURE.md's `## Layers`: {unplaced:?}"
    );

    let found = upward_imports(&src, &floors).expect("reading gateway/src");
    let listed = debt(
        &std::fs::read_to_string(root.join("tests/layering-debt.txt"))
            .expect("tests/layering-debt.txt"),
    );
    let new: Vec<_> = found.difference(&listed).collect();
    let paid: Vec<_> = listed.difference(&found).collect();
    assert!(
        new.is_empty(),
        "these imports run up a floor (ARCHITECTURE.md, `## Layers`): move the code down, \
         or pass what it needs in from above: {new:#?}"
    );
    assert!(
        paid.is_empty(),
        "these imports no longer run up: remove them from tests/layering-debt.txt: {paid:#?}"
    );
}

#[test]
fn the_floors_are_read_in_order_and_a_module_on_two_is_refused() {
    let doc = "# A\n\n## Layers\n\nText.\n\n1. `text`, `children` — leaves\n2. `config` — the \
               config\n\n## Next\n\n1. `app` — not a floor\n";
    let read = floors(doc).expect("floors");
    assert_eq!(read.get("text"), Some(&0));
    assert_eq!(read.get("children"), Some(&0));
    assert_eq!(read.get("config"), Some(&1));
    assert_eq!(read.get("app"), None);
    assert!(floors("## Layers\n1. `a` — x\n2. `a` — y\n").is_err());
}

#[test]
fn paths_in_comments_and_longer_names_are_not_imports() {
    let src = "use crate::store::Store; // crate::agent\n/// crate::cron\nlet x = \
               crate::config::load(); my_crate::agent::x();\n";
    let used = used_modules(src);
    assert_eq!(
        used.into_iter().collect::<Vec<_>>(),
        vec!["config".to_owned(), "store".to_owned()]
    );
}
