//! Keeps shared statements from being copied again: every SQL string literal of the
//! SQLite body (`sqlite/`) is compared with every one of the PostgreSQL body (`pg/`), with
//! whitespace collapsed and SQLite's `?` placeholders numbered as `$n` (the dialect layer's
//! own difference). A statement found in both belongs in `sql/<area>.rs`, written once.
//!
//! `cargo test -p switchboard-store verbatim -- --nocapture` also prints the share of the
//! SQLite statements found in PostgreSQL's code (exactly, and as a substring of a larger
//! one), the figure issue 33 reported at 58 %.

use std::path::{Path, PathBuf};

/// The Rust files under `dir`, recursively, in a stable order.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out
}

/// The string literals of a Rust source (plain and raw), comments and char literals skipped.
/// A plain literal's `\` line continuations and escapes are kept as written: SQL texts have
/// none, and both sides are read the same way.
pub(crate) fn literals(src: &str) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\'') or a lifetime ('a): skip the former.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                } else {
                    i += 1;
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let start = j + 1;
                let close = format!("\"{}", "#".repeat(hashes));
                let end = start + src[start..].find(&close).unwrap();
                out.push(src[start..end].to_string());
                i = end + close.len();
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push(src[start..i].to_string());
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether a literal is a statement (or a script of several), or the tail of one built
/// with `format!` after a shared head (`"{SELECT} WHERE …"`).
fn is_statement(lit: &str) -> bool {
    let lit = lit.trim_start();
    let head = lit.to_ascii_uppercase();
    let formatted = lit.starts_with('{')
        && lit[1..].split_once('}').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        });
    formatted
        || ["SELECT ", "INSERT ", "UPDATE ", "DELETE ", "WITH "]
            .iter()
            .any(|k| head.starts_with(k))
}

/// A statement's text with whitespace collapsed and `?` / `?NNN` written `$n`.
pub(crate) fn normalize(sql: &str) -> String {
    let mut out = String::new();
    let mut next = 1;
    let mut quote = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                let mut n = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    n.push(*d);
                    chars.next();
                }
                if n.is_empty() {
                    n = next.to_string();
                    next += 1;
                }
                out.push('$');
                out.push_str(&n);
            }
            (None, c) if c.is_whitespace() || c == '\\' => {
                if !out.ends_with(' ') {
                    out.push(' ');
                }
            }
            (None, c) => out.push(c),
        }
    }
    out.trim().to_string()
}

/// The normalized statements of an engine's body (its folder without its tests'
/// fixtures), with the file each came from.
fn statements(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut out = Vec::new();
    for f in rust_files(&root) {
        let rel = f.strip_prefix(&root).unwrap();
        let test = rel.components().any(|c| {
            let c = c.as_os_str().to_string_lossy();
            c == "tests" || c == "tests.rs" || c.ends_with("_tests.rs")
        });
        if test {
            continue;
        }
        let src = std::fs::read_to_string(&f).unwrap();
        let name = rel.display().to_string();
        for lit in literals(&src) {
            if is_statement(&lit) {
                out.push((name.clone(), normalize(&lit)));
            }
        }
    }
    out
}

/// How many statements `sql/<area>.rs` write once for both engines.
fn shared_statements() -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join("sql");
    rust_files(&root)
        .iter()
        .filter(|f| !f.ends_with("tests.rs") && !f.ends_with("verbatim.rs"))
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .matches(": Sql =")
                .count()
        })
        .sum()
}

/// Catches: a statement copied into both engine bodies instead of written once in
/// `sql/<area>.rs` (the duplication issue 33 measured at 58 % of SQLite's statements).
#[test]
fn no_statement_is_written_verbatim_in_both_engines() {
    let sqlite = statements("sqlite");
    let pg = statements("pg");
    assert!(
        sqlite.len() > 5 && pg.len() > 5,
        "the scan found the bodies"
    );
    let shared = shared_statements();
    assert!(shared > 50, "the scan found the shared statements");
    let exact: Vec<&(String, String)> = sqlite
        .iter()
        .filter(|(_, s)| pg.iter().any(|(_, p)| p == s))
        .collect();
    let within = sqlite
        .iter()
        .filter(|(_, s)| pg.iter().any(|(_, p)| p.contains(s.as_str())))
        .count();
    // SQLite runs its own statements and the shared ones.
    let share = |n: usize| 100.0 * n as f64 / (sqlite.len() + shared) as f64;
    println!(
        "shared statements (sql/): {shared}; SQLite's own: {}; PostgreSQL's own: {}; \
         SQLite statements found verbatim in PostgreSQL's code: {} ({:.0} %) exactly, \
         {} ({:.0} %) inside a larger statement or equal",
        sqlite.len(),
        pg.len(),
        exact.len(),
        share(exact.len()),
        within,
        share(within),
    );
    for (file, s) in &exact {
        println!("  sqlite/{file}: {s}");
    }
    assert!(
        exact.is_empty(),
        "{} statement(s) written in both engines' bodies; move them to sql/<area>.rs",
        exact.len()
    );
}

/// Catches: a scanner that misses literals (a check that passes because it reads nothing).
#[test]
fn the_scanner_reads_plain_and_raw_literals_and_numbers_placeholders() {
    let src = "// \"not this\"\nlet c = '\"'; let a = \"SELECT ?\n  FROM t\"; \
               let b = r#\"UPDATE t SET x = ?2, y = ?\"#; /* \"nor this\" */";
    let lits = literals(src);
    assert_eq!(lits.len(), 2, "{lits:?}");
    assert_eq!(normalize(&lits[0]), "SELECT $1 FROM t");
    assert_eq!(normalize(&lits[1]), "UPDATE t SET x = $2, y = $1");
    assert_eq!(normalize("SELECT '?' , ?"), "SELECT '?' , $1");
    assert!(is_statement("{SELECT} WHERE s.run_id = ?"));
    assert!(!is_statement("{key} is not a statement"));
    assert!(!is_statement("{}"));
}
