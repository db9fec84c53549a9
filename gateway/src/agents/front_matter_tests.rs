//! Tests of the front matter reader: the forms agent files use, errors with their line,
//! and properties over arbitrary text.

use super::*;
use proptest::prelude::*;

fn entries(text: &str) -> Vec<(String, Value)> {
    parse(text)
        .expect("parses")
        .entries
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

fn s(v: &str) -> Value {
    Value::Scalar(v.into())
}

fn l(v: &[&str]) -> Value {
    Value::List(v.iter().map(|x| x.to_string()).collect())
}

#[test]
fn reads_the_forms_agent_files_use() {
    let doc = parse(
        "---\r\nname: reviewer\r\ndescription: \"Reviews: code \\\"well\\\"\" # why\r\ntools: read, edit\r\n\
         aliases: [rev, 'code-review', \"x, y\"]\r\nallowAgents:\r\n  - a\r\n  # note\r\n  - 'b'\r\n\
         maxSteps: 7 # comment\r\nthinking: |\r\n  line one\r\n  line two\r\ncolor: >\r\n  folded\r\n  text\r\n\
         empty:\r\n---\r\n\r\nYou review.\r\n",
    )
    .expect("parses");
    assert_eq!(doc.body, "You review.");
    let got: Vec<(String, Value, usize)> = doc
        .entries
        .into_iter()
        .map(|e| (e.key, e.value, e.line))
        .collect();
    assert_eq!(
        got,
        vec![
            ("name".into(), s("reviewer"), 2),
            ("description".into(), s("Reviews: code \"well\""), 3),
            ("tools".into(), s("read, edit"), 4),
            ("aliases".into(), l(&["rev", "code-review", "x, y"]), 5),
            ("allowAgents".into(), l(&["a", "b"]), 6),
            ("maxSteps".into(), s("7"), 10),
            ("thinking".into(), s("line one\nline two"), 11),
            ("color".into(), s("folded text"), 14),
            ("empty".into(), s(""), 17),
        ]
    );
}

#[test]
fn no_front_matter_is_all_body() {
    let doc = parse("# Title\n\nBody\n").expect("parses");
    assert!(doc.entries.is_empty());
    assert_eq!(doc.body, "# Title\n\nBody");
    assert_eq!(entries("---\n---\nx"), vec![]);
    assert_eq!(
        parse("\u{feff}---\na: 1\n---\n")
            .expect("bom")
            .entries
            .len(),
        1
    );
}

/// Catches: a syntax error reported without its line (the user cannot find it).
#[test]
fn errors_name_their_line() {
    let line = |t: &str| parse(t).expect_err("error").line;
    assert_eq!(line("---\nname: x\n"), 1, "no closing fence");
    assert_eq!(line("---\nname: x\nnot a pair\n---\n"), 3);
    assert_eq!(line("---\na: 1\na: 2\n---\n"), 3);
    assert_eq!(line("---\n\n\ntools: [a, b\n---\n"), 4);
    assert_eq!(line("---\nname: \"open\n---\n"), 2);
    assert_eq!(line("---\nname: 'x' y\n---\n"), 2);
    assert_eq!(line("---\n  indented: 1\n---\n"), 2);
    assert_eq!(line("---\nt: [[a]]\n---\n"), 2);
    assert_eq!(line("---\nt: \"\\q\"\n---\n"), 2);
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a panic (a slice at a non-char boundary, an index past the end) on any
    /// file text, and an error line outside the file.
    #[test]
    fn any_text_parses_or_fails_with_a_line_in_the_file(
        parts in prop::collection::vec(
            prop_oneof![
                Just("---".to_string()), Just("\n".to_string()), Just(": ".to_string()),
                Just("- ".to_string()), Just("[".to_string()), Just("]".to_string()),
                Just(",".to_string()), Just("\"".to_string()), Just("'".to_string()),
                Just(" #".to_string()), Just("\\".to_string()), Just("  ".to_string()),
                Just("|".to_string()), Just(">".to_string()), Just("\r".to_string()),
                ".{0,6}", any::<char>().prop_map(String::from),
            ],
            0..40,
        ),
    ) {
        let text = parts.concat();
        match parse(&text) {
            Ok(doc) => {
                for e in &doc.entries {
                    prop_assert!(e.line >= 2 && e.line <= text.split('\n').count());
                }
            }
            Err(e) => prop_assert!(e.line >= 1 && e.line <= text.split('\n').count()),
        }
    }

    /// Catches: a scalar or list item that does not round-trip through quoting (a value
    /// with `#`, `,`, `:` or quotes read back differently).
    #[test]
    fn quoted_values_round_trip(key in "[a-zA-Z][a-zA-Z0-9_]{0,10}", v in ".*", items in prop::collection::vec(".*", 0..4)) {
        let quote = |x: &str| format!("\"{}\"", x.replace('\\', "\\\\").replace('"', "\\\"").replace('\t', "\\t"));
        let single = |x: &str| format!("'{}'", x.replace('\'', "''"));
        let list: Vec<String> = items.iter().map(|x| quote(x)).collect();
        let text = format!(
            "---\n{key}: {}\nlist_{key}: [{}]\nsingle_{key}: {}\n---\nbody",
            quote(&v), list.join(", "), single(&v)
        );
        let got = entries(&text);
        prop_assert_eq!(&got[0].1, &Value::Scalar(v.clone()));
        let want: Vec<String> = items.iter().filter(|x| !x.is_empty()).cloned().collect();
        prop_assert_eq!(&got[1].1, &Value::List(want));
        prop_assert_eq!(&got[2].1, &Value::Scalar(v));
    }
}
