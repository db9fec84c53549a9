//! Strict deserialization of the parsed JSON value into `Config` that reports every schema
//! error, not just the first.
//!
//! serde stops at the first error, so this runs it in a loop: deserialize, note the error
//! and its key path (`serde_path_to_error`), prune the offending value from the document so
//! the field falls back to its default, and try again. Pruning an array element shifts the
//! later ones, so [`Pruned`] remembers what was removed and translates paths back to the
//! indexes the user wrote. A "missing field" that only appears because an earlier error
//! pruned it is not reported twice.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::error::{Issue, KeyPath, Seg};
use super::Config;

/// Stop after this many schema errors; the user has enough to fix by then.
const MAX_ERRORS: usize = 100;

/// Deserializes `value` into `Config`, collecting every schema error.
///
/// Returns the config built from what remained after pruning (`None` if nothing usable is
/// left), the issues (paths as the user wrote them) and the pruning record, which
/// translates paths on the returned config back to the source.
pub(crate) fn deserialize(mut value: Value) -> (Option<Config>, Vec<Issue>, Pruned) {
    let mut issues = Vec::new();
    let mut pruned = Pruned::default();
    for _ in 0..=MAX_ERRORS {
        if !value.is_object() {
            let found = kind(&value);
            issues.push(Issue::new(
                KeyPath::default(),
                format!("invalid type: {found}, expected an object"),
            ));
            return (None, issues, pruned);
        }
        let err = match serde_path_to_error::deserialize::<_, Config>(&value) {
            Ok(config) => match shape_mismatch(&value, &config) {
                None => return (Some(config), issues, pruned),
                Some((current, message)) => {
                    issues.push(Issue::new(pruned.translate(&current), message));
                    if !pruned.remove(&mut value, &current) {
                        return (None, issues, pruned);
                    }
                    continue;
                }
            },
            Err(err) => err,
        };
        let current = segments(err.path());
        let original = pruned.translate(&current);
        let message = err.inner().to_string();
        if let Some(field) = missing_field(&message) {
            let missing = original.key(&field);
            if !pruned.removed.contains(&missing) {
                issues.push(Issue::new(
                    original,
                    format!("missing required key \"{field}\""),
                ));
            }
        } else {
            issues.push(Issue::new(original, rewrite_message(&message)));
        }
        if current.0.is_empty() || !pruned.remove(&mut value, &current) {
            return (None, issues, pruned);
        }
    }
    issues.push(Issue::new(
        KeyPath::default(),
        format!("too many errors; stopped after {MAX_ERRORS}"),
    ));
    (None, issues, pruned)
}

/// serde also accepts a struct written as an array (`[field1, field2]`) and a unit enum
/// value written as `{ "variant": null }`. A config file should not: compare the shape of
/// what was written with what it became, and report the first place they differ.
fn shape_mismatch(written: &Value, config: &Config) -> Option<(KeyPath, String)> {
    fn walk(written: &Value, became: &Value, path: &mut KeyPath) -> Option<(KeyPath, String)> {
        match (written, became) {
            (Value::Object(w), Value::Object(b)) => {
                for (k, wv) in w {
                    if let Some(bv) = b.get(k) {
                        path.0.push(Seg::Key(k.clone()));
                        let found = walk(wv, bv, path);
                        path.0.pop();
                        if found.is_some() {
                            return found;
                        }
                    }
                }
                None
            }
            (Value::Array(w), Value::Array(b)) => {
                for (i, (wv, bv)) in w.iter().zip(b).enumerate() {
                    path.0.push(Seg::Index(i));
                    let found = walk(wv, bv, path);
                    path.0.pop();
                    if found.is_some() {
                        return found;
                    }
                }
                None
            }
            (Value::Object(_) | Value::Array(_), _) => {
                let expected = match became {
                    Value::Object(_) => "an object",
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    Value::Null => "null",
                };
                Some((
                    path.clone(),
                    format!("invalid type: {}, expected {expected}", kind(written)),
                ))
            }
            _ => None,
        }
    }
    // Serializing a `Config` cannot fail (string map keys, infallible field serializers).
    let became = serde_json::to_value(config).ok()?;
    walk(written, &became, &mut KeyPath::default())
}

/// How serde names a JSON value's type in "invalid type" messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "map",
        Value::Array(_) => "sequence",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
    }
}

fn segments(path: &serde_path_to_error::Path) -> KeyPath {
    let mut out = Vec::new();
    for seg in path {
        match seg {
            serde_path_to_error::Segment::Seq { index } => out.push(Seg::Index(*index)),
            serde_path_to_error::Segment::Map { key } => out.push(Seg::Key(key.clone())),
            serde_path_to_error::Segment::Enum { .. } => {}
            serde_path_to_error::Segment::Unknown => break,
        }
    }
    KeyPath(out)
}

/// What was pruned from the document, in the user's (original) coordinates.
#[derive(Debug, Default)]
pub(crate) struct Pruned {
    /// Original path of an array → original indexes removed from it.
    removed_indexes: BTreeMap<KeyPath, BTreeSet<usize>>,
    /// Original paths of every removed value.
    removed: BTreeSet<KeyPath>,
}

impl Pruned {
    /// Maps a path in the pruned document back to the path the user wrote.
    pub(crate) fn translate(&self, current: &KeyPath) -> KeyPath {
        let mut original = KeyPath::default();
        for seg in &current.0 {
            let seg = match seg {
                Seg::Index(j) => Seg::Index(match self.removed_indexes.get(&original) {
                    Some(gone) => (0..).filter(|i| !gone.contains(i)).nth(*j).unwrap_or(*j),
                    None => *j,
                }),
                key => key.clone(),
            };
            original.0.push(seg);
        }
        original
    }

    /// Removes the value at `current` from `doc`; false if there is nothing there.
    fn remove(&mut self, doc: &mut Value, current: &KeyPath) -> bool {
        let Some((last, parent)) = current.0.split_last() else {
            return false;
        };
        let original = self.translate(current);
        let mut node = doc;
        for seg in parent {
            let next = match (node, seg) {
                (Value::Object(map), Seg::Key(k)) => map.get_mut(k),
                (Value::Array(items), Seg::Index(i)) => items.get_mut(*i),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => return false,
            }
        }
        let removed = match (node, last) {
            (Value::Object(map), Seg::Key(k)) => map.remove(k).is_some(),
            (Value::Array(items), Seg::Index(i)) if *i < items.len() => {
                items.remove(*i);
                if let Some((Seg::Index(orig_index), array)) = original.0.split_last() {
                    self.removed_indexes
                        .entry(KeyPath(array.to_vec()))
                        .or_default()
                        .insert(*orig_index);
                }
                true
            }
            _ => false,
        };
        if removed {
            self.removed.insert(original);
        }
        removed
    }
}

/// The field name in serde's "missing field `x`".
fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_owned())
}

/// The names between backticks, in order.
fn backticked(s: &str) -> Vec<&str> {
    s.split('`').skip(1).step_by(2).collect()
}

/// Turns serde's messages into ones written for people editing a config file.
fn rewrite_message(message: &str) -> String {
    for (prefix, what) in [("unknown field `", "key"), ("unknown variant `", "value")] {
        if message.starts_with(prefix) {
            let names = backticked(message);
            let Some((given, expected)) = names.split_first() else {
                break;
            };
            if expected.is_empty() {
                return format!("unknown {what} \"{given}\"; this object has no keys");
            }
            let hint = closest(given, expected)
                .map(|s| format!(" (did you mean \"{s}\"?)"))
                .unwrap_or_default();
            return format!(
                "unknown {what} \"{given}\"{hint}; expected one of: {}",
                expected.join(", ")
            );
        }
    }
    let mut out = message.to_owned();
    if let Some(i) = out.find(", expected struct ") {
        out.replace_range(i.., ", expected an object");
    }
    for (from, to) in [
        (", expected u16", ", expected an integer from 0 to 65535"),
        (
            ", expected u32",
            ", expected a whole number from 0 to 4294967295",
        ),
        (", expected u64", ", expected a whole number >= 0"),
        (", expected usize", ", expected a whole number >= 0"),
        (", expected f64", ", expected a number"),
        (", expected a map", ", expected an object"),
        (", expected a sequence", ", expected an array"),
        (", expected string or map", ", expected a string"),
    ] {
        if out.ends_with(from) {
            out.truncate(out.len() - from.len());
            out.push_str(to);
        }
    }
    out
}

/// The candidate within edit distance 2 of `given` (case-insensitively), if any.
fn closest<'a>(given: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let given = given.to_lowercase();
    candidates
        .iter()
        .map(|c| (edit_distance(&given, &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
#[path = "strict_tests.rs"]
mod tests;
