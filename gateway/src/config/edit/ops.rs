//! Planning an edit: `set` and `unset` of a key path become byte-range replacements of the
//! source text. A changed value replaces exactly that value's bytes; a new key is inserted
//! after its last sibling, indented, quoted and comma'd like its siblings; a removed key
//! takes its line with it when it had the line to itself.

use serde_json::Value;

use super::super::error::{KeyPath, Seg};
use super::cst::{self, Element, Entry, Kind, Member, Node};
use super::style::Style;
use super::EditError;

/// Replace `start..end` of the source with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Applies non-overlapping edits to `src`.
pub(crate) fn apply(src: &str, edits: &[Edit]) -> String {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out =
        String::with_capacity(src.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for e in sorted {
        out.push_str(&src[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&src[at..]);
    out
}

/// Start of the line holding byte `pos`.
pub(super) fn line_start(src: &str, pos: usize) -> usize {
    src[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// The spaces and tabs that start the line holding byte `pos`.
pub(super) fn indent_of_line(src: &str, pos: usize) -> &str {
    let start = line_start(src, pos);
    let rest = &src[start..];
    let len = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..len]
}

/// Whether only spaces and tabs precede byte `pos` on its line.
pub(super) fn starts_line(src: &str, pos: usize) -> bool {
    src[line_start(src, pos)..pos]
        .chars()
        .all(|c| c == ' ' || c == '\t')
}

pub(super) fn is_block(src: &str, node: &Node) -> bool {
    src[node.start..node.end].contains('\n')
}

/// What a `set` changes: the edits, and the byte span of the old value it replaces
/// (`None` when the key is new).
#[derive(Debug)]
pub(crate) struct SetPlan {
    pub(crate) edits: Vec<Edit>,
    // Read by the property tests, which check that nothing outside it changed.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) replaced: Option<(usize, usize)>,
}

/// Plans `set path = value` on `src`.
pub(crate) fn plan_set(src: &str, path: &[Seg], value: &Value) -> Result<SetPlan, EditError> {
    let root = cst::parse(src)?;
    let style = Style::detect(src, root.as_ref());
    let Some(root) = root else {
        // A blank file (perhaps only comments): the object goes after what is there.
        let built = build(path, value)?;
        let mut text = String::new();
        if !src.is_empty() && !src.ends_with('\n') {
            text.push_str(style.eol);
        }
        text.push_str(&style.block(&built, ""));
        text.push_str(style.eol);
        return Ok(SetPlan {
            edits: vec![Edit {
                start: src.len(),
                end: src.len(),
                text,
            }],
            replaced: None,
        });
    };
    let mut node = &root;
    for (depth, seg) in path.iter().enumerate() {
        let here = || KeyPath(path[..depth].to_vec()).to_string();
        let next = match (&node.kind, seg) {
            (Kind::Object(members), Seg::Key(k)) => {
                match members.iter().rev().find(|m| &m.key == k) {
                    Some(m) => &m.value,
                    None => {
                        let built = build(&path[depth + 1..], value)?;
                        return Ok(SetPlan {
                            edits: insert_member(src, &style, node, members, k, &built),
                            replaced: None,
                        });
                    }
                }
            }
            (Kind::Array(elements), Seg::Index(i)) => match elements.get(*i) {
                Some(e) => &e.value,
                None if *i == elements.len() => {
                    let built = build(&path[depth + 1..], value)?;
                    return Ok(SetPlan {
                        edits: insert_element(src, &style, node, elements, &built),
                        replaced: None,
                    });
                }
                None => {
                    return Err(EditError::Path(format!(
                        "{} has {} element{}; the next one is [{}]",
                        display(&here()),
                        elements.len(),
                        if elements.len() == 1 { "" } else { "s" },
                        elements.len()
                    )))
                }
            },
            (Kind::Other, _) if &src[node.start..node.end] == "null" => {
                // `null` stands for "unset": it becomes the container the path needs.
                let built = build(&path[depth..], value)?;
                return Ok(replace(src, &style, node, &built));
            }
            (kind, seg) => {
                return Err(EditError::Path(format!(
                    "{} is {}, so it has no {}",
                    display(&here()),
                    describe(kind),
                    match seg {
                        Seg::Key(k) => format!("key {k:?}"),
                        Seg::Index(i) => format!("element [{i}]"),
                    }
                )))
            }
        };
        node = next;
    }
    Ok(replace(src, &style, node, value))
}

fn display(path: &str) -> String {
    if path.is_empty() {
        "the file's top level".to_string()
    } else {
        format!("`{path}`")
    }
}

fn describe(kind: &Kind) -> &'static str {
    match kind {
        Kind::Object(_) => "an object",
        Kind::Array(_) => "an array",
        Kind::Str(_) => "a string",
        Kind::Other => "a plain value",
    }
}

/// `value` nested under the rest of a path that does not exist yet: keys become objects,
/// `[0]` a one-element array.
fn build(rest: &[Seg], value: &Value) -> Result<Value, EditError> {
    let mut out = value.clone();
    for seg in rest.iter().rev() {
        out = match seg {
            Seg::Key(k) => {
                let mut map = serde_json::Map::new();
                map.insert(k.clone(), out);
                Value::Object(map)
            }
            Seg::Index(0) => Value::Array(vec![out]),
            Seg::Index(i) => {
                return Err(EditError::Path(format!(
                    "[{i}] does not exist yet; a new array starts at [0]"
                )))
            }
        };
    }
    Ok(out)
}

/// Replaces `node`'s bytes with `value` (a string keeps the quote it had).
fn replace(src: &str, style: &Style, node: &Node, value: &Value) -> SetPlan {
    let text = match (&node.kind, value) {
        (Kind::Str(q), Value::String(s)) => style.string(s, Some(char::from(*q))),
        _ => style.block(value, indent_of_line(src, node.start)),
    };
    SetPlan {
        edits: vec![Edit {
            start: node.start,
            end: node.end,
            text,
        }],
        replaced: Some((node.start, node.end)),
    }
}

/// How keys are written in this object: quoted when every sibling that could go bare is
/// quoted; the quote character of its quoted siblings.
fn key_habit(style: &Style, members: &[Member]) -> (bool, Option<char>) {
    let quote = members.iter().find_map(|m| m.key_quote).map(char::from);
    let could_be_bare: Vec<&Member> = members
        .iter()
        .filter(|m| super::style::is_identifier(&m.key))
        .collect();
    let quoted = if could_be_bare.is_empty() {
        style.quote_keys
    } else {
        could_be_bare.iter().all(|m| m.key_quote.is_some())
    };
    (quoted, quote)
}

/// The text between the last sibling's key and value (`": "`, `":"`, `" : "`), when it is
/// only spaces around the colon.
fn separator(src: &str, members: &[Member]) -> String {
    members
        .last()
        .map(|m| &src[m.key_end..m.value.start])
        .filter(|s| s.chars().all(|c| c == ' ' || c == ':') && s.matches(':').count() == 1)
        .unwrap_or(": ")
        .to_string()
}

fn insert_member(
    src: &str,
    style: &Style,
    obj: &Node,
    members: &[Member],
    key: &str,
    value: &Value,
) -> Vec<Edit> {
    let (quoted, quote) = key_habit(style, members);
    let key = style.key(key, quoted, quote);
    let sep = separator(src, members);
    insert(src, style, obj, members, value, |value_text| {
        format!("{key}{sep}{value_text}")
    })
}

fn insert_element(
    src: &str,
    style: &Style,
    arr: &Node,
    elements: &[Element],
    value: &Value,
) -> Vec<Edit> {
    insert(src, style, arr, elements, value, |value_text| {
        value_text.to_string()
    })
}

/// Inserts an entry (`entry` makes its text from the value's text) as the last of
/// `container`, in the container's layout.
fn insert<E: Entry>(
    src: &str,
    style: &Style,
    container: &Node,
    entries: &[E],
    value: &Value,
    entry: impl Fn(&str) -> String,
) -> Vec<Edit> {
    let open = container.start;
    let close = container.end - 1;
    let line_indent = indent_of_line(src, open);
    let plain = !value.is_object() && !value.is_array();
    let Some(last) = entries.last() else {
        let comma = if style.trailing { "," } else { "" };
        if starts_line(src, close) {
            // `{` … `}` on lines of their own (perhaps with comments between): the entry
            // goes on a line of its own before the bracket.
            let inner = format!("{}{}", indent_of_line(src, close), style.unit);
            let at = line_start(src, close);
            return vec![Edit {
                start: at,
                end: at,
                text: format!(
                    "{inner}{}{comma}{}",
                    entry(&style.block(value, &inner)),
                    style.eol
                ),
            }];
        }
        let interior = &src[open + 1..close];
        if interior.chars().all(|c| c == ' ' || c == '\t') {
            // `[]` takes a plain value on one line; anything else opens the container over
            // several lines.
            let text = if plain && matches!(container.kind, Kind::Array(_)) {
                entry(&style.inline(value))
            } else {
                let inner = format!("{line_indent}{}", style.unit);
                format!(
                    "{eol}{inner}{}{comma}{eol}{line_indent}",
                    entry(&style.block(value, &inner)),
                    eol = style.eol
                )
            };
            return vec![Edit {
                start: open + 1,
                end: close,
                text,
            }];
        }
        // Comments inside, the bracket after them on the same line: the entry goes first.
        let inner = format!("{line_indent}{}", style.unit);
        return vec![Edit {
            start: open + 1,
            end: open + 1,
            text: format!(
                "{eol}{inner}{}{comma}{eol}{line_indent}",
                entry(&style.block(value, &inner)),
                eol = style.eol
            ),
        }];
    };
    let last_value = last.entry_value();
    let mut edits = Vec::new();
    if !is_block(src, container) {
        // On one line: `{ a: 1 }` → `{ a: 1, b: 2 }`.
        let text = entry(&style.inline(value));
        match last.entry_comma() {
            None => edits.push(Edit {
                start: last_value.end,
                end: last_value.end,
                text: format!(", {text}"),
            }),
            Some(c) => edits.push(Edit {
                start: c + 1,
                end: c + 1,
                text: format!(" {text},"),
            }),
        }
        return edits;
    }
    let indent = if starts_line(src, last.entry_start()) {
        indent_of_line(src, last.entry_start()).to_string()
    } else {
        format!("{line_indent}{}", style.unit)
    };
    let text = entry(&style.block(value, &indent));
    if starts_line(src, close) {
        // The usual layout: one entry per line, the bracket on a line of its own.
        let trailing = last.entry_comma().is_some();
        if !trailing {
            edits.push(Edit {
                start: last_value.end,
                end: last_value.end,
                text: ",".into(),
            });
        }
        let at = line_start(src, close);
        edits.push(Edit {
            start: at,
            end: at,
            text: format!(
                "{indent}{text}{}{}",
                if trailing { "," } else { "" },
                style.eol
            ),
        });
    } else {
        match last.entry_comma() {
            None => edits.push(Edit {
                start: last_value.end,
                end: last_value.end,
                text: format!(",{}{indent}{text}", style.eol),
            }),
            Some(c) => edits.push(Edit {
                start: c + 1,
                end: c + 1,
                text: format!("{}{indent}{text},", style.eol),
            }),
        }
    }
    edits
}
