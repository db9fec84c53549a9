//! Tests of the loader's bounds: file size, nesting depth, and out-of-range durations and
//! counts, each reported with its key path and line.

use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

/// (path, line, column, message) of each error.
fn errors(src: &str) -> Vec<(String, Option<usize>, Option<usize>, String)> {
    parse_config(src, &no_env)
        .expect_err("config should be invalid")
        .into_iter()
        .map(|e| (e.path, e.line, e.column, e.message))
        .collect()
}

/// `{ deep: [[[…]]] }` with `levels` brackets (8–40 KB for a few thousand levels).
fn deep(levels: usize) -> String {
    format!("{{ deep: {}{} }}", "[".repeat(levels), "]".repeat(levels))
}

/// Catches: the JSON5 parser handed a file nested thousands of levels deep (it recursed
/// until the stack overflowed and the process aborted).
#[test]
fn a_deeply_nested_file_is_an_error_with_its_position() {
    for levels in [5_000, 20_000, 40] {
        let want_path = format!("deep{}", "[0]".repeat(MAX_NESTING - 1));
        assert_eq!(
            errors(&deep(levels)),
            vec![(
                want_path,
                Some(1),
                Some(8 + MAX_NESTING),
                format!("objects and arrays are nested more than {MAX_NESTING} levels deep"),
            )],
            "{levels} levels"
        );
    }
    // Unbalanced, and in other shapes: still refused before the parser recurses.
    let open_only = format!("{{ a: {}", "{ b: ".repeat(10_000));
    assert!(errors(&open_only)[0].3.contains("nested more than"));
    let mixed = format!("[{}", "{x:[".repeat(5_000));
    assert!(errors(&mixed)[0].3.contains("nested more than"));
}

/// Catches: the depth limit counting brackets inside strings or comments, or a comment
/// ended only by `\n` (a `\r` ends it too, and the brackets after it count).
#[test]
fn nesting_counts_only_real_brackets() {
    let brackets = "[".repeat(200);
    let quoted = format!("{{ agents: {{ list: [{{ id: \"a\", name: \"{brackets}\" }}] }} }}");
    assert!(parse_config(&quoted, &no_env).is_ok());
    let commented = format!("{{ // {brackets}\n /* {brackets} */ }}");
    assert!(parse_config(&commented, &no_env).is_ok());
    let after_cr = format!(
        "{{ // note\r deep: {}{} }}",
        "[".repeat(100),
        "]".repeat(100)
    );
    assert!(errors(&after_cr)[0].3.contains("nested more than"));
    // Exactly the limit is fine as far as nesting goes (the schema then rejects `deep`).
    let at_limit = deep(MAX_NESTING - 1);
    assert!(!errors(&at_limit)[0].3.contains("nested more than"));
}

/// Catches: no size bound on the text the parser gets.
#[test]
fn an_oversized_text_is_an_error() {
    let big = format!("{{ /* {} */ }}", "x".repeat(MAX_CONFIG_BYTES));
    assert_eq!(
        errors(&big),
        vec![(
            String::new(),
            None,
            None,
            "the file is larger than 1048576 bytes (1 MiB), the most a config file may be".into()
        )]
    );
    let fits = format!("{{ /* {} */ }}", "x".repeat(MAX_CONFIG_BYTES - 10));
    assert!(parse_config(&fits, &no_env).is_ok());
}

/// Catches: `load_file` reading a file of any size whole into memory.
#[tokio::test]
async fn load_file_refuses_an_oversized_file_without_reading_it_all() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.json5");
    let file = std::fs::File::create(&path).expect("create");
    // Sparse: 64 MiB of zeros that take no disk space.
    file.set_len(64 << 20).expect("set_len");
    let errs = load_file(&path, &no_env).await.expect_err("too large");
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].message.starts_with("cannot read ")
            && errs[0].message.ends_with(
                "the file is larger than 1048576 bytes (1 MiB), the most a config file may be"
            ),
        "{errs:?}"
    );
    std::fs::write(&path, b"{ gateway: { port: 0 } }\xff").expect("write");
    let errs = load_file(&path, &no_env).await.expect_err("not UTF-8");
    assert!(errs[0].message.contains("not UTF-8"), "{errs:?}");
}

/// Catches: a duration or count from the file passing unchecked (a debounce of 500
/// billion years panicked the reload task at the first edit; archiveAfterMinutes of 10^15
/// wrapped to -1 ms and archived children at once).
#[test]
fn out_of_range_durations_and_counts_name_key_line_and_range() {
    let src = r#"{
  gateway: { reload: { debounce: "500000000000y" } },
  agents: { defaults: {
    timeout: "0s",
    maxSteps: 4000000000,
    subagents: { archiveAfterMinutes: 1000000000000000, runTimeoutSeconds: 10000000000000000 },
  } },
}"#;
    assert_eq!(
        errors(src),
        vec![
            (
                "gateway.reload.debounce".into(),
                Some(2),
                Some(24),
                "must be between \"0s\" and \"1m\", got \"500000000000years\"".into()
            ),
            (
                "agents.defaults.timeout".into(),
                Some(4),
                Some(5),
                "must be between \"1s\" and \"7days\", got \"0s\"".into()
            ),
            (
                "agents.defaults.maxSteps".into(),
                Some(5),
                Some(5),
                "must be between 1 and 1000, got 4000000000".into()
            ),
            (
                "agents.defaults.subagents.archiveAfterMinutes".into(),
                Some(6),
                Some(18),
                "must be between 0 and 525600 minutes (0 = never archive), got 1000000000000000"
                    .into()
            ),
            (
                "agents.defaults.subagents.runTimeoutSeconds".into(),
                Some(6),
                Some(57),
                "must be between 0 and 604800 seconds (0 = no timeout), got 10000000000000000"
                    .into()
            ),
        ]
    );
}
