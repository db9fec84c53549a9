//! Property tests of the config editor: random JSON5 documents written in random styles
//! (indentation, quoting, trailing commas, comments anywhere, CRLF), random edits. A `set`
//! of an existing key changes that value's bytes and nothing else; a new key or element is
//! a pure insertion; an `unset` only deletes; and the result always parses to exactly the
//! expected document.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::ops::{apply, plan_set};
use super::remove::plan_unset;
use super::*;

/// Keys the editor has to quote, escape or tell apart, and arbitrary Unicode.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z_$][a-zA-Z0-9_$]{0,6}",
        ".{0,6}",
        prop::collection::vec(any::<char>(), 0..5).prop_map(|c| c.into_iter().collect()),
        prop::sample::select(vec![
            "a.b",
            "-1001234567890",
            "*",
            "",
            "true",
            "null",
            "it's",
            "q\"",
            "\\",
            "\u{2028}",
            "//",
            "/*",
            "[0]",
        ])
        .prop_map(String::from),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1000i32..1000).prop_map(|n| json!(f64::from(n) + 0.5)),
        ".{0,8}".prop_map(Value::String),
        prop::collection::vec(any::<char>(), 0..6)
            .prop_map(|c| Value::String(c.into_iter().collect())),
        prop::sample::select(vec!["${VAR}", "a'b\"c", "\\n", "/* x */", "// y", "\r\n"])
            .prop_map(|s| json!(s)),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn document() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(key(), value(), 1..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// A stream of random choices for the writer.
struct Choices {
    bytes: Vec<u8>,
    at: usize,
}

impl Choices {
    fn next(&mut self) -> u8 {
        let b = self.bytes[self.at % self.bytes.len()];
        self.at += 1;
        b
    }
    fn chance(&mut self, in_four: u8) -> bool {
        self.next() % 4 < in_four
    }
}

/// Comment text: arbitrary characters, never ending the comment early.
fn comment_text(c: &mut Choices, noise: &str, block: bool) -> String {
    let skip = (c.next() as usize) % (noise.len().max(1));
    noise
        .chars()
        .skip(skip)
        .take(6)
        .filter(|ch| {
            !(matches!(ch, '\n' | '\r' | '\u{2028}' | '\u{2029}') || (block && *ch == '*'))
        })
        .collect()
}

/// An independent JSON5 writer (it shares no code with the editor).
struct Writer<'a> {
    c: Choices,
    unit: &'static str,
    eol: &'static str,
    noise: &'a str,
}

fn quote(s: &str, q: char) -> String {
    let mut out = String::from(q);
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            ch if ch == q => {
                out.push('\\');
                out.push(ch);
            }
            ch if ch.is_control() || matches!(ch, '\u{2028}' | '\u{2029}') => {
                for u in ch.encode_utf16(&mut [0; 2]) {
                    out.push_str(&format!("\\u{u:04X}"));
                }
            }
            ch => out.push(ch),
        }
    }
    out.push(q);
    out
}

impl Writer<'_> {
    fn string(&mut self, s: &str) -> String {
        quote(s, if self.c.chance(2) { '"' } else { '\'' })
    }

    fn key(&mut self, k: &str) -> String {
        if style::is_identifier(k) && self.c.chance(2) {
            k.to_string()
        } else {
            self.string(k)
        }
    }

    /// Maybe a comment, in a place where whitespace may go.
    fn trivia(&mut self, out: &mut String, indent: &str) {
        match self.c.next() % 6 {
            0 => {
                let t = comment_text(&mut self.c, self.noise, false);
                out.push_str(&format!("//{t}{}{indent}", self.eol));
            }
            1 => {
                let t = comment_text(&mut self.c, self.noise, true);
                out.push_str(&format!("/*{t}*/ "));
            }
            _ => {}
        }
    }

    fn write(&mut self, out: &mut String, v: &Value, indent: &str) {
        let entries: Vec<(Option<&String>, &Value)> = match v {
            Value::Object(m) => m.iter().map(|(k, v)| (Some(k), v)).collect(),
            Value::Array(a) => a.iter().map(|v| (None, v)).collect(),
            Value::String(s) => return out.push_str(&self.string(s)),
            other => return out.push_str(&other.to_string()),
        };
        let (open, close) = if v.is_object() {
            ('{', '}')
        } else {
            ('[', ']')
        };
        let block = self.c.chance(3);
        let trailing = self.c.chance(2);
        let inner = format!("{indent}{}", self.unit);
        out.push(open);
        for (i, (k, v)) in entries.iter().enumerate() {
            if block {
                out.push_str(self.eol);
                out.push_str(&inner);
                self.trivia(out, &inner);
            } else if self.c.chance(2) {
                out.push(' ');
            }
            if let Some(k) = k {
                out.push_str(&self.key(k));
                out.push_str(if self.c.chance(3) { ": " } else { ":" });
            }
            self.write(out, v, &inner);
            if i + 1 < entries.len() || trailing {
                out.push(',');
            }
            if block && self.c.chance(1) {
                let t = comment_text(&mut self.c, self.noise, false);
                out.push_str(&format!(" //{t}"));
            }
        }
        if block {
            out.push_str(self.eol);
            out.push_str(indent);
        } else if !entries.is_empty() && self.c.chance(2) {
            out.push(' ');
        }
        out.push(close);
    }
}

fn write_document(doc: &Value, bytes: Vec<u8>, noise: &str) -> String {
    let mut w = Writer {
        unit: ["  ", "    ", "\t"][bytes[0] as usize % 3],
        eol: if bytes[1] % 4 == 0 { "\r\n" } else { "\n" },
        c: Choices { bytes, at: 2 },
        noise,
    };
    let mut out = String::new();
    if w.c.chance(2) {
        let t = comment_text(&mut w.c, noise, false);
        out.push_str(&format!("//{t}{}", w.eol));
    }
    w.write(&mut out, doc, "");
    out.push_str(w.eol);
    out
}

fn parsed(src: &str) -> Value {
    json5::from_str(src).unwrap_or_else(|e| panic!("{e}\n--- text ---\n{src}"))
}

/// Every path to a value under the root.
fn paths(v: &Value, here: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    let children: Vec<(Seg, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, v)| (Seg::Key(k.clone()), v)).collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (Seg::Index(i), v))
            .collect(),
        _ => return,
    };
    for (seg, child) in children {
        here.push(seg);
        out.push(here.clone());
        paths(child, here, out);
        here.pop();
    }
}

fn at_mut<'a>(v: &'a mut Value, path: &[Seg]) -> &'a mut Value {
    path.iter().fold(v, |v, seg| match (v, seg) {
        (Value::Object(m), Seg::Key(k)) => m.get_mut(k).unwrap(),
        (Value::Array(a), Seg::Index(i)) => &mut a[*i],
        _ => unreachable!("path into a plain value"),
    })
}

fn containers(doc: &Value, want_object: bool) -> Vec<Vec<Seg>> {
    let mut all = vec![Vec::new()];
    paths(doc, &mut Vec::new(), &mut all);
    all.into_iter()
        .filter(|p| {
            let mut d = doc.clone();
            let v = at_mut(&mut d, p);
            if want_object {
                v.is_object()
            } else {
                v.is_array()
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(crate::proptest_cases::config())]

    /// Catches: a `set` of an existing key touching any byte outside that value.
    #[test]
    fn set_existing_changes_only_that_value(
        doc in document(),
        bytes in prop::collection::vec(any::<u8>(), 64),
        noise in ".{0,24}",
        pick in any::<usize>(),
        new in value(),
    ) {
        let src = write_document(&doc, bytes, &noise);
        prop_assert_eq!(&parsed(&src), &doc);
        let mut all = Vec::new();
        paths(&doc, &mut Vec::new(), &mut all);
        prop_assume!(!all.is_empty());
        let path = &all[pick % all.len()];
        let plan = plan_set(&src, path, &new).unwrap();
        let (start, end) = plan.replaced.unwrap();
        prop_assert_eq!(plan.edits.len(), 1);
        let out = apply(&src, &plan.edits);
        prop_assert_eq!(&out[..start], &src[..start]);
        prop_assert_eq!(&out[out.len() - (src.len() - end)..], &src[end..]);
        let mut expected = doc.clone();
        *at_mut(&mut expected, path) = new;
        prop_assert_eq!(parsed(&out), expected);
    }

    /// Catches: a new key or element that rewrites its neighbours, or lands somewhere the
    /// parser reads differently.
    #[test]
    fn set_new_only_inserts(
        doc in document(),
        bytes in prop::collection::vec(any::<u8>(), 64),
        noise in ".{0,24}",
        pick in any::<usize>(),
        new_key in key(),
        nested in prop::collection::vec(key(), 0..3),
        into_array in any::<bool>(),
        new in value(),
    ) {
        let src = write_document(&doc, bytes, &noise);
        // An array when the document has one and it was asked for; else an object (the
        // root always is one), so no case is thrown away.
        let arrays = if into_array { containers(&doc, false) } else { Vec::new() };
        let candidates = if arrays.is_empty() { containers(&doc, true) } else { arrays };
        let mut path = candidates[pick % candidates.len()].clone();
        let mut expected = doc.clone();
        let container = at_mut(&mut expected, &path);
        let mut built = new.clone();
        for k in nested.iter().rev() {
            let mut m = Map::new();
            m.insert(k.clone(), built);
            built = Value::Object(m);
        }
        match container {
            Value::Array(items) => {
                path.push(Seg::Index(items.len()));
                items.push(built);
            }
            Value::Object(m) => {
                let mut k = new_key.clone();
                while m.contains_key(&k) {
                    k.push('_');
                }
                path.push(Seg::Key(k.clone()));
                m.insert(k, built);
            }
            _ => unreachable!(),
        }
        path.extend(nested.into_iter().map(Seg::Key));
        let plan = plan_set(&src, &path, &new).unwrap();
        prop_assert!(plan.replaced.is_none());
        // Insertions, except the spaces inside an empty `{ }` or `[ ]`.
        prop_assert!(
            plan.edits.iter().all(|e| src[e.start..e.end].chars().all(|c| c == ' ' || c == '\t')),
            "only insertions: {:?}",
            plan.edits
        );
        let out = apply(&src, &plan.edits);
        prop_assert_eq!(parsed(&out), expected);
    }

    /// Catches: an `unset` that leaves a dangling comma, removes a neighbour, or writes
    /// anything.
    #[test]
    fn unset_only_deletes(
        doc in document(),
        bytes in prop::collection::vec(any::<u8>(), 64),
        noise in ".{0,24}",
        pick in any::<usize>(),
    ) {
        let src = write_document(&doc, bytes, &noise);
        let mut all = Vec::new();
        paths(&doc, &mut Vec::new(), &mut all);
        prop_assume!(!all.is_empty());
        let path = &all[pick % all.len()];
        let edits = plan_unset(&src, path).unwrap().unwrap();
        prop_assert!(edits.iter().all(|e| e.text.is_empty()));
        let out = apply(&src, &edits);
        let mut expected = doc.clone();
        let (last, parent) = path.split_last().unwrap();
        match (at_mut(&mut expected, parent), last) {
            (Value::Object(m), Seg::Key(k)) => {
                m.remove(k);
            }
            (Value::Array(a), Seg::Index(i)) => {
                a.remove(*i);
            }
            _ => unreachable!(),
        }
        prop_assert_eq!(parsed(&out), expected);
    }

    /// Catches: the scanner panicking or looping on text that is not JSON5.
    #[test]
    fn any_text_is_an_error_or_an_edit(text in ".{0,64}", pick in prop::sample::select(vec!["a", "a.b", "a[0]"])) {
        let path: KeyPathArg = pick.parse().unwrap();
        let _ = plan_set(&text, &path.0, &json!(1));
        let _ = plan_unset(&text, &path.0);
    }
}
