//! How a document is written — indentation unit, quote character, quoted or bare keys,
//! trailing commas, line endings — and rendering new values in that style.

use serde_json::Value;

use super::cst::{Kind, Node};

/// A document's writing habits, read from the text (majority wins; JSON5's usual habits
/// where the text says nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Style {
    /// One level of indentation (`"  "`, `"    "`, `"\t"`).
    pub(super) unit: String,
    /// The quote character of strings.
    pub(super) quote: char,
    /// Whether keys are quoted even when they need not be.
    pub(super) quote_keys: bool,
    /// Whether the last entry of a multi-line object or array has a comma.
    pub(super) trailing: bool,
    /// `"\n"` or `"\r\n"`.
    pub(super) eol: &'static str,
}

/// Arrays of plain values up to this many characters are written on one line.
const INLINE_ARRAY_WIDTH: usize = 72;

impl Style {
    pub(super) fn detect(src: &str, root: Option<&Node>) -> Style {
        let mut counts = Counts::default();
        if let Some(root) = root {
            counts.walk(src, root);
        }
        let eol = if src.contains("\r\n") { "\r\n" } else { "\n" };
        let quote_keys = counts.quoted_keys > counts.bare_keys;
        Style {
            unit: counts.unit.unwrap_or_else(|| "  ".to_string()),
            quote: if counts.single_quoted > counts.double_quoted {
                '\''
            } else {
                '"'
            },
            quote_keys,
            trailing: if counts.trailing + counts.no_trailing == 0 {
                !quote_keys
            } else {
                counts.trailing > counts.no_trailing
            },
            eol,
        }
    }

    /// `value` written at a line indented by `indent`: objects and long arrays over
    /// several lines, each nested level one `unit` deeper.
    pub(super) fn block(&self, value: &Value, indent: &str) -> String {
        let mut out = String::new();
        self.write(&mut out, value, indent, false, None);
        out
    }

    /// `value` on one line.
    pub(super) fn inline(&self, value: &Value) -> String {
        let mut out = String::new();
        self.write(&mut out, value, "", true, None);
        out
    }

    /// A string value in `quote` (the document's quote when `None`).
    pub(super) fn string(&self, s: &str, quote: Option<char>) -> String {
        quote_string(s, quote.unwrap_or(self.quote))
    }

    /// A key as this document writes keys: bare when it may be and keys are not quoted.
    pub(super) fn key(&self, key: &str, quoted: bool, quote: Option<char>) -> String {
        if !quoted && is_identifier(key) {
            key.to_string()
        } else {
            quote_string(key, quote.unwrap_or(self.quote))
        }
    }

    fn write(
        &self,
        out: &mut String,
        value: &Value,
        indent: &str,
        inline: bool,
        quote: Option<char>,
    ) {
        match value {
            Value::Null | Value::Bool(_) | Value::Number(_) => out.push_str(&value.to_string()),
            Value::String(s) => out.push_str(&self.string(s, quote)),
            Value::Array(items) if items.is_empty() => out.push_str("[]"),
            Value::Object(map) if map.is_empty() => out.push_str("{}"),
            Value::Array(items) => {
                let plain = items.iter().all(|v| !v.is_array() && !v.is_object());
                let one_line = inline || {
                    let parts: Vec<String> = items.iter().map(|v| self.inline(v)).collect();
                    plain && parts.iter().map(|p| p.len() + 2).sum::<usize>() <= INLINE_ARRAY_WIDTH
                };
                if one_line {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        self.write(out, item, indent, true, None);
                    }
                    out.push(']');
                } else {
                    let inner = format!("{indent}{}", self.unit);
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        out.push_str(self.eol);
                        out.push_str(&inner);
                        self.write(out, item, &inner, false, None);
                        if i + 1 < items.len() || self.trailing {
                            out.push(',');
                        }
                    }
                    out.push_str(self.eol);
                    out.push_str(indent);
                    out.push(']');
                }
            }
            Value::Object(map) => {
                if inline {
                    out.push_str("{ ");
                    for (i, (k, v)) in map.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        out.push_str(&self.key(k, self.quote_keys, None));
                        out.push_str(": ");
                        self.write(out, v, indent, true, None);
                    }
                    out.push_str(" }");
                } else {
                    let inner = format!("{indent}{}", self.unit);
                    out.push('{');
                    for (i, (k, v)) in map.iter().enumerate() {
                        out.push_str(self.eol);
                        out.push_str(&inner);
                        out.push_str(&self.key(k, self.quote_keys, None));
                        out.push_str(": ");
                        self.write(out, v, &inner, false, None);
                        if i + 1 < map.len() || self.trailing {
                            out.push(',');
                        }
                    }
                    out.push_str(self.eol);
                    out.push_str(indent);
                    out.push('}');
                }
            }
        }
    }
}

/// `s` as a JSON5 string literal in quote `q`.
fn quote_string(s: &str, q: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{FEFF}') => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// Keys that may be written without quotes: ASCII identifiers that are not literals.
pub(super) fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !matches!(key, "true" | "false" | "null" | "Infinity" | "NaN")
}

/// Tallies of the habits seen in a document.
#[derive(Default)]
struct Counts {
    quoted_keys: usize,
    bare_keys: usize,
    double_quoted: usize,
    single_quoted: usize,
    trailing: usize,
    no_trailing: usize,
    /// The indentation of the first entry found one level deeper than its container's line.
    unit: Option<String>,
}

impl Counts {
    fn walk(&mut self, src: &str, node: &Node) {
        match &node.kind {
            Kind::Str(q) => {
                if *q == b'\'' {
                    self.single_quoted += 1;
                } else {
                    self.double_quoted += 1;
                }
            }
            Kind::Other => {}
            Kind::Object(members) => {
                for m in members {
                    match m.key_quote {
                        Some(_) if super::style::is_identifier(&m.key) => self.quoted_keys += 1,
                        Some(_) => {}
                        None => self.bare_keys += 1,
                    }
                    self.walk(src, &m.value);
                }
                let last = members.last().map(|m| (m.key_start, m.comma));
                self.container(src, node, last);
            }
            Kind::Array(elements) => {
                for e in elements {
                    self.walk(src, &e.value);
                }
                let last = elements.last().map(|e| (e.value.start, e.comma));
                self.container(src, node, last);
            }
        }
    }

    /// Trailing-comma habit and indentation unit, from a multi-line container.
    fn container(&mut self, src: &str, node: &Node, last: Option<(usize, Option<usize>)>) {
        let Some((last_start, comma)) = last else {
            return;
        };
        let close = node.end - 1;
        if !super::ops::starts_line(src, close) {
            return;
        }
        if comma.is_some() {
            self.trailing += 1;
        } else {
            self.no_trailing += 1;
        }
        if self.unit.is_none() && super::ops::starts_line(src, last_start) {
            let outer = super::ops::indent_of_line(src, node.start);
            let inner = super::ops::indent_of_line(src, last_start);
            if let Some(unit) = inner.strip_prefix(outer).filter(|u| !u.is_empty()) {
                self.unit = Some(unit.to_string());
            }
        }
    }
}
