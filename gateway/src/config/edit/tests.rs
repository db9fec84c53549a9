//! Unit tests of the config editor: byte-exact edits of the commented example config,
//! new keys in the style of their siblings, removals, and refused paths.
#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};

use super::*;

const EXAMPLE: &str = include_str!("../../../../config.example.json5");

fn path(p: &str) -> KeyPathArg {
    p.parse().unwrap()
}

fn parsed(src: &str) -> Value {
    json5::from_str(src).unwrap()
}

/// The changed region of `new` against `old`: (old middle, new middle), after the common
/// prefix and suffix are taken off.
fn diff<'a>(old: &'a str, new: &'a str) -> (&'a str, &'a str) {
    let prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    )
}

/// Catches: `config set` rewriting the file (reformatting, dropping comments) instead of
/// replacing the value's bytes only.
#[test]
fn set_on_the_example_changes_only_the_value() {
    let cases = [
        (
            "agents.defaults.subagents.maxConcurrent",
            json!(2),
            "8",
            "2",
        ),
        ("gateway.port", json!(8080), "18789", "8080"),
        ("channels.telegram.enabled", json!(true), "false", "true"),
        (
            "agents.defaults.model",
            json!("openai/gpt-4o"),
            "\"openai/gpt-4o-mini\"",
            "\"openai/gpt-4o\"",
        ),
        ("gateway.auth.token", json!("s3cret"), "null", "\"s3cret\""),
        (
            "agents.list[0].name",
            json!("Ops"),
            "\"Switchboard\"",
            "\"Ops\"",
        ),
        (
            "models.providers.openai.models[0].cost.input",
            json!(0.25),
            "0.15",
            "0.25",
        ),
    ];
    for (key, value, old_bytes, new_bytes) in cases {
        let plan = ops::plan_set(EXAMPLE, &path(key).0, &value).unwrap();
        let (start, end) = plan.replaced.unwrap();
        assert_eq!(&EXAMPLE[start..end], old_bytes, "{key}");
        let new = set(EXAMPLE, &path(key), &value).unwrap();
        assert_eq!(
            new,
            format!("{}{new_bytes}{}", &EXAMPLE[..start], &EXAMPLE[end..]),
            "{key}"
        );
        assert_eq!(get(&parsed(&new), &path(key)), Some(&value), "{key}");
        let mut expected = parsed(EXAMPLE);
        *expected.pointer_mut(&pointer(key)).unwrap() = value.clone();
        assert_eq!(parsed(&new), expected, "{key}: nothing else changes");
        crate::config::parse_config(&new, &|_| Some("x".into())).unwrap();
    }
}

fn pointer(key: &str) -> String {
    path(key)
        .0
        .iter()
        .map(|s| match s {
            Seg::Key(k) => format!("/{k}"),
            Seg::Index(i) => format!("/{i}"),
        })
        .collect()
}

/// Catches: a new key appended without the sibling's indentation, bare keys or trailing
/// comma (or the comment before the closing brace lost).
#[test]
fn new_keys_follow_their_siblings() {
    let new = set(
        EXAMPLE,
        &path("agents.defaults.subagents.model"),
        &json!("openai/gpt-4o"),
    )
    .unwrap();
    assert_eq!(
        diff(EXAMPLE, &new).1,
        "\"openai/gpt-4o\"",
        "existing null key: value only"
    );

    let src =
        "{\n  // the agents\n  agents: {\n    defaults: {\n      maxSteps: 3,\n    },\n  },\n}\n";
    let new = set(src, &path("agents.defaults.timeout"), &json!("5m")).unwrap();
    assert_eq!(
        new,
        "{\n  // the agents\n  agents: {\n    defaults: {\n      maxSteps: 3,\n      timeout: \"5m\",\n    },\n  },\n}\n"
    );

    // Quoted keys, no trailing commas, four spaces: plain JSON stays plain JSON.
    let src = "{\n    \"gateway\": {\n        \"port\": 1\n    }\n}";
    let new = set(src, &path("gateway.bind"), &json!("0.0.0.0")).unwrap();
    assert_eq!(
        new,
        "{\n    \"gateway\": {\n        \"port\": 1,\n        \"bind\": \"0.0.0.0\"\n    }\n}"
    );

    // Missing parents are created as nested objects, in block style.
    let new = set(
        src,
        &path("channels.telegram.groups.-1001.requireMention"),
        &json!(false),
    )
    .unwrap();
    assert_eq!(
        new,
        "{\n    \"gateway\": {\n        \"port\": 1\n    },\n    \"channels\": {\n        \"telegram\": {\n            \"groups\": {\n                \"-1001\": {\n                    \"requireMention\": false\n                }\n            }\n        }\n    }\n}"
    );

    // One-line objects stay on one line.
    let new = set("{ a: { b: 1 } }", &path("a.c"), &json!([1, 2])).unwrap();
    assert_eq!(new, "{ a: { b: 1, c: [1, 2] } }");
    // CRLF files get CRLF lines.
    let new = set("{\r\n  a: 1,\r\n}\r\n", &path("b"), &json!(true)).unwrap();
    assert_eq!(new, "{\r\n  a: 1,\r\n  b: true,\r\n}\r\n");
}

/// Catches: appending to an allowlist rewriting the list, or `[n]` past the end accepted.
#[test]
fn arrays_append_and_replace() {
    let src = "{ channels: { telegram: { allowFrom: [] } } }";
    let one = set(
        src,
        &path("channels.telegram.allowFrom[0]"),
        &json!(123456789),
    )
    .unwrap();
    assert_eq!(
        one,
        "{ channels: { telegram: { allowFrom: [123456789] } } }"
    );
    let two = set(
        &one,
        &path("channels.telegram.allowFrom[1]"),
        &json!("@ann"),
    )
    .unwrap();
    assert_eq!(
        two,
        "{ channels: { telegram: { allowFrom: [123456789, \"@ann\"] } } }"
    );
    let replaced = set(&two, &path("channels.telegram.allowFrom[0]"), &json!(42)).unwrap();
    assert_eq!(diff(&two, &replaced), ("123456789", "42"));
    let err = set(&two, &path("channels.telegram.allowFrom[5]"), &json!(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`channels.telegram.allowFrom` has 2 elements; the next one is [2]"
    );
    // In the example, `allowFrom: []` becomes `[42]` and nothing else moves.
    let new = set(EXAMPLE, &path("channels.telegram.allowFrom[0]"), &json!(42)).unwrap();
    assert_eq!(diff(EXAMPLE, &new), ("", "42"));
    // `null` stands for unset and takes the shape the path needs.
    let new = set(
        EXAMPLE,
        &path("channels.telegram.groupAllowFrom[0]"),
        &json!(7),
    )
    .unwrap();
    assert_eq!(diff(EXAMPLE, &new), ("null", "[7]"));
}

/// Catches: `unset` leaving an empty line or a dangling comma, or eating a neighbour's
/// comment.
#[test]
fn unset_removes_the_line_and_keeps_comments() {
    let src = "{\n  // port\n  port: 1, // the port\n  bind: \"x\",\n}\n";
    assert_eq!(
        unset(src, &path("port")).unwrap().unwrap(),
        "{\n  // port\n  bind: \"x\",\n}\n"
    );
    let src = "{\n  \"a\": 1,\n  \"b\": 2\n}";
    assert_eq!(unset(src, &path("b")).unwrap().unwrap(), "{\n  \"a\": 1\n}");
    assert_eq!(
        unset("{ a: 1, b: 2 }", &path("a")).unwrap().unwrap(),
        "{ b: 2 }"
    );
    assert_eq!(
        unset("{ a: 1, b: 2 }", &path("b")).unwrap().unwrap(),
        "{ a: 1 }"
    );
    assert_eq!(
        unset("{ a: [1, 2, 3] }", &path("a[1]")).unwrap().unwrap(),
        "{ a: [1, 3] }"
    );
    assert_eq!(
        unset("{ a: { b: 1 } }", &path("a.b")).unwrap().unwrap(),
        "{ a: {} }"
    );
    assert_eq!(unset("{ a: 1 }", &path("b")).unwrap(), None);
    assert_eq!(unset("{ a: 1 }", &path("a.b.c")).unwrap(), None);
    let new = unset(EXAMPLE, &path("gateway.reload.debounce"))
        .unwrap()
        .unwrap();
    assert_eq!(diff(EXAMPLE, &new).1, "", "only removed");
    assert!(new.contains("// Quiet time after the last change before the file is read."));
}

/// Catches: a duplicate key edited at its first occurrence, which the parser ignores.
#[test]
fn duplicate_keys_edit_the_one_in_force() {
    let new = set("{ a: 1, a: 2 }", &path("a"), &json!(3)).unwrap();
    assert_eq!(new, "{ a: 1, a: 3 }");
}

/// Catches: a path through a string or number silently replacing it.
#[test]
fn paths_through_plain_values_are_refused() {
    let err = set(
        "{ gateway: { port: 1 } }",
        &path("gateway.port.x"),
        &json!(1),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`gateway.port` is a plain value, so it has no key \"x\""
    );
    let err = set("{ a: \"s\" }", &path("a[0]"), &json!(1)).unwrap_err();
    assert_eq!(err.to_string(), "`a` is a string, so it has no element [0]");
}

/// Catches: an empty or comment-only file not getting a root object.
#[test]
fn blank_files_get_a_root_object() {
    assert_eq!(
        set("", &path("gateway.port"), &json!(0)).unwrap(),
        "{\n  gateway: {\n    port: 0,\n  },\n}\n"
    );
    assert_eq!(
        set("// mine\n", &path("a"), &json!("b")).unwrap(),
        "// mine\n{\n  a: \"b\",\n}\n"
    );
}

/// Catches: strings written without escaping their quote or control characters.
#[test]
fn strings_are_escaped_and_keep_their_quote() {
    let new = set("{ a: 'x' }", &path("a"), &json!("it's \"q\"\n\u{2028}")).unwrap();
    assert_eq!(new, "{ a: 'it\\'s \"q\"\\n\\u2028' }");
    assert_eq!(parsed(&new)["a"], json!("it's \"q\"\n\u{2028}"));
}

/// Catches: command-line values misread (an address taken for a number, `${VAR}` refused).
#[test]
fn values_parse_as_json5_else_string() {
    assert_eq!(parse_value("8"), json!(8));
    assert_eq!(parse_value("true"), json!(true));
    assert_eq!(parse_value("null"), Value::Null);
    assert_eq!(parse_value("[1, 'a']"), json!([1, "a"]));
    assert_eq!(parse_value("{ a: 1 }"), json!({"a": 1}));
    assert_eq!(parse_value("\"8\""), json!("8"));
    assert_eq!(parse_value("0.0.0.0"), json!("0.0.0.0"));
    assert_eq!(parse_value("${TOKEN}"), json!("${TOKEN}"));
    assert_eq!(
        parse_value(&"[".repeat(100_000)),
        json!("[".repeat(100_000))
    );
}

/// Catches: an edit written straight over the file (a half-written file for the watcher),
/// an invalid edit written anyway, or the file's mode lost.
#[tokio::test]
async fn file_edits_validate_and_replace_atomically() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.json5");
    std::fs::write(&file, EXAMPLE).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let env = |_: &str| None;

    let err = edit_file(
        &file,
        &path("agents.defaults.maxConcurrent"),
        &Change::Set(json!(0)),
        &env,
    )
    .await
    .unwrap_err();
    let FileEditError::Invalid(errors) = err else {
        panic!("{err}")
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].path, "agents.defaults.maxConcurrent");
    assert!(errors[0].line.is_some());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        EXAMPLE,
        "left as it was"
    );

    let report = edit_file(
        &file,
        &path("agents.defaults.maxConcurrent"),
        &Change::Set(json!(2)),
        &env,
    )
    .await
    .unwrap();
    assert_eq!(report.outcome, Outcome::Written);
    // OPENAI_API_KEY is not set here: a warning, not a refusal.
    assert!(
        report
            .warnings
            .iter()
            .all(crate::config::load::is_unset_variable),
        "{:?}",
        report.warnings
    );
    assert!(!report.warnings.is_empty());
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(diff(EXAMPLE, &text), ("4", "2"));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left behind");

    let again = edit_file(
        &file,
        &path("agents.defaults.maxConcurrent"),
        &Change::Set(json!(2)),
        &env,
    )
    .await
    .unwrap();
    assert_eq!(again.outcome, Outcome::Unchanged);
    let gone = edit_file(&file, &path("nothing.here"), &Change::Unset, &env)
        .await
        .unwrap();
    assert_eq!(gone.outcome, Outcome::NotSet);

    // A new file is created private.
    let fresh = dir.path().join("new.json5");
    edit_file(&fresh, &path("gateway.port"), &Change::Set(json!(0)), &env)
        .await
        .unwrap();
    assert_eq!(
        std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A symlink is followed: the link stays, its target is edited.
    let link = dir.path().join("link.json5");
    std::os::unix::fs::symlink(&fresh, &link).unwrap();
    edit_file(&link, &path("gateway.port"), &Change::Set(json!(1)), &env)
        .await
        .unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&fresh).unwrap().contains("port: 1"));
}
