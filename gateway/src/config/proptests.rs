//! Property tests of the config loader and the duration parser: arbitrary text and
//! arbitrary JSON value trees never panic, every error points into the file, and a valid
//! config survives a round trip through its own serialization.

use std::time::Duration;

use proptest::prelude::*;
use serde_json::Value;

use super::*;

fn no_env(name: &str) -> Option<String> {
    (name == "SET").then(|| "value".to_string())
}

/// Characters the JSON5 grammar and the loader care about, to mix into arbitrary text.
const SYNTAX: &[char] = &[
    '{', '}', '[', ']', ':', ',', '"', '\'', '/', '*', '\\', '\n', '\r', '$', '0', '1', 'x', 'e',
    '-', '.', ' ', '\u{2028}', '\u{FEFF}',
];

/// Words of the schema and of JSON5, so arbitrary text sometimes forms real keys.
const WORDS: &[&str] = &[
    "gateway",
    "reload",
    "debounce",
    "agents",
    "defaults",
    "list",
    "id",
    "maxConcurrent",
    "models",
    "providers",
    "api",
    "openai-chat",
    "subagents",
    "archiveAfterMinutes",
    "runTimeoutSeconds",
    "true",
    "null",
    "Infinity",
    "NaN",
    "0x1F",
    "1e999",
    "\"5m\"",
    "${SET}",
    "${NOPE}",
    "//",
    "/*",
    "*/",
];

fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<char>().prop_map(String::from),
        prop::sample::select(SYNTAX).prop_map(String::from),
        prop::sample::select(WORDS).prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..64).prop_map(|p| p.concat())
}

/// Keys: the schema's (so values reach deep validation) or anything.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(WORDS).prop_map(str::to_owned),
        1 => ".{0,6}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,8}".prop_map(Value::String),
        prop::sample::select(
            &[
                "1s",
                "500000000000y",
                "5m",
                "hybrid",
                "main",
                "${SET}",
                "${NOPE}"
            ][..]
        )
        .prop_map(|s| Value::String(s.to_owned())),
    ]
}

fn tree() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A config-shaped document: an object of arbitrary trees under section names.
fn document() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(key(), tree(), 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Renders a value as JSON5 the way people write it: unquoted keys where allowed, single
/// quotes, trailing commas and comments.
fn json5(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            out.push_str("{ // note\n");
            for (k, v) in map {
                let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && k.chars().all(|c| c.is_ascii_alphanumeric());
                if plain {
                    out.push_str(k);
                } else {
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                }
                out.push_str(": ");
                json5(v, out);
                out.push_str(",\n");
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push_str("[/* items */ ");
            for v in items {
                json5(v, out);
                out.push_str(", ");
            }
            out.push(']');
        }
        Value::String(s) if !s.contains(['\'', '\\']) && !s.chars().any(char::is_control) => {
            out.push('\'');
            out.push_str(s);
            out.push('\'');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Every error points into the file: a key path or a line (or, for the file as a whole,
/// says what is wrong with it).
fn located(errors: &[ConfigError]) -> Result<(), TestCaseError> {
    prop_assert!(!errors.is_empty());
    for e in errors {
        prop_assert!(
            e.line.is_some() || !e.path.is_empty(),
            "error without a position: {e}"
        );
        prop_assert!(!e.message.is_empty());
    }
    Ok(())
}

/// A valid config, varied over the fields with ranges.
fn valid_config() -> impl Strategy<Value = Config> {
    (
        0u64..=60_000,
        1u32..=1024,
        1u64..=1800,
        prop::option::of(1u64..=limits::MAX_RUN_TIMEOUT_SECS),
        1u32..=limits::MAX_STEPS,
        0u64..=limits::MAX_ARCHIVE_AFTER_MINUTES,
        0u64..=limits::MAX_RUN_TIMEOUT_SECS,
        prop::sample::select(&[QueueMode::Collect, QueueMode::Followup, QueueMode::Steer][..]),
        prop::collection::vec("[a-z0-9][a-z0-9_-]{0,8}", 0..3),
        prop::option::of("[^$]{0,12}"),
    )
        .prop_map(
            |(debounce, lane, step, timeout, steps, archive, run_timeout, mode, ids, name)| {
                let mut c = Config::default();
                c.gateway.reload.debounce = Duration::from_millis(debounce);
                c.agents.defaults.max_concurrent = lane;
                c.agents.defaults.step_timeout_seconds = step;
                c.agents.defaults.timeout = timeout.map(Duration::from_secs);
                c.agents.defaults.max_steps = steps;
                c.agents.defaults.subagents.archive_after_minutes = archive;
                c.agents.defaults.subagents.run_timeout_seconds = run_timeout;
                c.messages.queue.mode = mode;
                let mut seen = std::collections::BTreeSet::new();
                c.agents.list = ids
                    .into_iter()
                    .filter(|id| seen.insert(id.clone()))
                    .map(|id| AgentEntry {
                        id,
                        name: name.clone(),
                        ..AgentEntry::default()
                    })
                    .collect();
                c
            },
        )
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic or an unlocated error on any text (a crash on a config edit).
    #[test]
    fn arbitrary_text_never_panics_and_errors_are_located(src in text()) {
        if let Err(errors) = parse_config(&src, &no_env) {
            located(&errors)?;
        }
    }

    /// Catches: a panic on any value tree, in JSON or in hand-written JSON5 style, and an
    /// error without a line; an accepted config reads back the same.
    #[test]
    fn arbitrary_trees_never_panic_and_errors_have_lines(doc in document()) {
        let mut styled = String::new();
        json5(&doc, &mut styled);
        for src in [doc.to_string(), styled] {
            match parse_config(&src, &no_env) {
                Ok(config) => {
                    let again = serde_json::to_string(&config).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(parse_config(&again, &no_env), Ok(config));
                }
                Err(errors) => {
                    located(&errors)?;
                    for e in &errors {
                        prop_assert!(e.line.is_some(), "no line: {}", e);
                    }
                }
            }
        }
    }

    /// Catches: a valid config that does not survive its own serialization (a range check
    /// refusing a value the schema writes, or a duration that does not parse back).
    #[test]
    fn a_valid_config_round_trips(config in valid_config(), pretty in any::<bool>()) {
        let src = if pretty {
            serde_json::to_string_pretty(&config)
        } else {
            serde_json::to_string(&config)
        }.map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parse_config(&src, &no_env), Ok(config));
    }

    /// Catches: a nesting bound that the parser can get around.
    #[test]
    fn nesting_past_the_limit_is_always_refused(
        extra in 1usize..200,
        opens in prop::collection::vec(prop::sample::select(&["[", "{a:", "{'k': ", "[1, "][..]), 0..8),
    ) {
        let mut src = String::from("{ x: ");
        for i in 0..(MAX_NESTING + extra) {
            src.push_str(opens.get(i % opens.len().max(1)).copied().unwrap_or("["));
        }
        let errors = parse_config(&src, &no_env).err().unwrap_or_default();
        prop_assert_eq!(errors.len(), 1);
        prop_assert!(errors[0].message.contains("nested more than"), "{}", errors[0]);
        prop_assert_eq!(errors[0].line, Some(1));
    }

    /// Catches: a panic in the duration parser (overflowing numbers, odd units).
    #[test]
    fn duration_parse_never_panics(s in "[0-9 .a-zµ]{0,24}|.{0,24}") {
        if let Err(e) = duration::parse(&s) {
            prop_assert!(e.starts_with("invalid duration "), "{}", e);
        }
    }

    /// Catches: a duration written by the config (`format`) that does not parse back.
    #[test]
    fn durations_round_trip(secs in 0u64..=(1u64 << 40), nanos in 0u32..1_000_000_000) {
        let d = Duration::new(secs, nanos);
        prop_assert_eq!(duration::parse(&duration::format(d)), Ok(d));
    }
}
