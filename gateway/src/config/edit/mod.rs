//! Editing the config file in place (`switchboard config get|set|unset`): a key path and a
//! value become byte-range edits of the JSON5 text, so comments, layout and quoting of
//! everything the edit does not touch stay byte for byte; new keys take the style of
//! their siblings. `file` adds the rest of an edit: validate the result, write it
//! atomically.

mod cst;
mod file;
mod ops;
mod path;
mod remove;
mod style;

use serde_json::Value;

pub use file::{edit_file, write_atomic, Change, EditReport, FileEditError, Outcome};
pub use ops::Edit;
pub use path::PathError;

use super::error::Seg;

/// Why an edit could not be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The file is not well-formed JSON5 (the loader's parser accepted it, this scanner
    /// did not: should not happen; reported rather than guessed at).
    #[error("the file is not valid JSON5 (line {line}, col {column}): {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// The key path does not fit the document (a key of a string, an index past the end).
    #[error("{0}")]
    Path(String),
    #[error(transparent)]
    BadPath(#[from] PathError),
}

/// A key path parsed from its written form (`channels.telegram.allowFrom[0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPathArg(pub(crate) Vec<Seg>);

impl std::str::FromStr for KeyPathArg {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Self, PathError> {
        path::parse(s).map(KeyPathArg)
    }
}

impl std::fmt::Display for KeyPathArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        super::error::KeyPath(self.0.clone()).fmt(f)
    }
}

/// The text with `path` set to `value`.
pub fn set(src: &str, path: &KeyPathArg, value: &Value) -> Result<String, EditError> {
    let plan = ops::plan_set(src, &path.0, value)?;
    Ok(ops::apply(src, &plan.edits))
}

/// The text without `path`; `None` when it is not there.
pub fn unset(src: &str, path: &KeyPathArg) -> Result<Option<String>, EditError> {
    Ok(remove::plan_unset(src, &path.0)?.map(|edits| ops::apply(src, &edits)))
}

/// The value at `path` in an already-parsed document (`None` when it is not there).
pub fn get<'a>(doc: &'a Value, path: &KeyPathArg) -> Option<&'a Value> {
    path.0.iter().try_fold(doc, |v, seg| match (v, seg) {
        (Value::Object(map), Seg::Key(k)) => map.get(k),
        (Value::Array(items), Seg::Index(i)) => items.get(*i),
        _ => None,
    })
}

/// A whole document written as this editor writes new keys in a fresh file: bare keys,
/// two-space indents, trailing commas, a final newline.
pub fn render(value: &Value) -> String {
    let style = style::Style::detect("", None);
    format!("{}\n", style.block(value, ""))
}

/// A command-line value: JSON5 if it parses as such (`8`, `true`, `null`, `["a"]`,
/// `"quoted"`), else the text itself as a string (`0.0.0.0`, `${TOKEN}`).
pub fn parse_value(text: &str) -> Value {
    // The JSON5 parser recurses once per level of nesting: count it first.
    let too_deep = super::source_map::SourceMap::new(text)
        .deeper_than(super::MAX_NESTING)
        .is_some();
    if text.len() > super::MAX_CONFIG_BYTES || too_deep {
        return Value::String(text.to_string());
    }
    json5::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
