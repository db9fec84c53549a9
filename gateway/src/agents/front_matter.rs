//! The front matter of an agent file: a `---` fenced block of YAML at the top of a Markdown
//! file, then the body. Only the subset agent files use is read (no YAML crate): `key: value`
//! scalars (plain, `'single'` or `"double"` quoted), flow lists `[a, b]`, block lists
//! (`- item` lines under `key:`), block scalars (`|` / `>` with indented lines), comments
//! and blank lines. Anything else is an error naming its line.

use thiserror::Error;

/// A front matter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Scalar(String),
    List(Vec<String>),
}

/// One `key: value` entry, with the 1-based line of its key in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: Value,
    pub line: usize,
}

/// A parsed agent file: its entries in file order and its body (the text after the
/// closing fence, trimmed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub entries: Vec<Entry>,
    pub body: String,
}

/// Why the front matter cannot be read, at a 1-based line of the file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}: {message}")]
pub struct SyntaxError {
    pub line: usize,
    pub message: String,
}

fn err(line: usize, message: impl Into<String>) -> SyntaxError {
    SyntaxError {
        line,
        message: message.into(),
    }
}

/// Splits `text` into front matter and body. A file without a leading `---` line has no
/// front matter: everything is body.
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let is_fence = |l: &str| l.trim_end_matches('\r').trim_end() == "---";
    if !lines.first().is_some_and(|l| is_fence(l)) {
        return Ok(Document {
            entries: Vec::new(),
            body: text.trim().to_string(),
        });
    }
    let Some(close) = lines.iter().skip(1).position(|l| is_fence(l)) else {
        return Err(err(1, "the front matter has no closing `---` line"));
    };
    let close = close + 1;
    let entries = parse_block(&lines[1..close], 2)?;
    let body = lines[close + 1..].join("\n").trim().to_string();
    Ok(Document { entries, body })
}

/// The lines between the fences; `first_line` is the file line of `block[0]`.
fn parse_block(block: &[&str], first_line: usize) -> Result<Vec<Entry>, SyntaxError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut i = 0;
    while i < block.len() {
        let line_no = first_line + i;
        let raw = block[i].trim_end_matches('\r');
        i += 1;
        if is_blank_or_comment(raw) {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            return Err(err(
                line_no,
                "unexpected indented line (no key above takes it)",
            ));
        }
        let Some((key, rest)) = raw.split_once(':') else {
            return Err(err(line_no, "expected `key: value`"));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(['"', '\'', '#', '[', ']', '{', '}']) {
            return Err(err(line_no, format!("not a key: {key:?}")));
        }
        if entries.iter().any(|e| e.key == key) {
            return Err(err(line_no, format!("`{key}` is given twice")));
        }
        let rest = rest.trim();
        let value = if rest.is_empty() || rest.starts_with('#') {
            // A block list, or an empty value.
            let mut items = Vec::new();
            while i < block.len() {
                let l = block[i].trim_end_matches('\r');
                if is_blank_or_comment(l) {
                    i += 1;
                    continue;
                }
                let t = l.trim_start();
                let Some(item) = t
                    .strip_prefix('-')
                    .filter(|r| r.is_empty() || r.starts_with([' ', '\t']))
                else {
                    break;
                };
                items.push(scalar(item.trim(), first_line + i)?);
                i += 1;
            }
            if items.is_empty() {
                Value::Scalar(String::new())
            } else {
                Value::List(items)
            }
        } else if rest == "|" || rest == ">" || rest == "|-" || rest == ">-" {
            let mut parts = Vec::new();
            while i < block.len() {
                let l = block[i].trim_end_matches('\r');
                if !(l.trim().is_empty() || l.starts_with([' ', '\t'])) {
                    break;
                }
                parts.push(l.trim());
                i += 1;
            }
            let sep = if rest.starts_with('|') { "\n" } else { " " };
            let joined = if sep == " " {
                parts
                    .iter()
                    .filter(|p| !p.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(sep)
            } else {
                parts.join(sep)
            };
            Value::Scalar(joined.trim().to_string())
        } else if let Some(inner) = rest.strip_prefix('[') {
            Value::List(flow_items(inner, line_no)?)
        } else {
            Value::Scalar(scalar(rest, line_no)?)
        };
        entries.push(Entry {
            key: key.to_string(),
            value,
            line: line_no,
        });
    }
    Ok(entries)
}

fn is_blank_or_comment(l: &str) -> bool {
    let t = l.trim();
    t.is_empty() || t.starts_with('#')
}

/// A plain scalar ends at ` #` (a comment).
fn strip_comment(s: &str) -> &str {
    match s.find(" #").or_else(|| s.find("\t#")) {
        Some(i) => &s[..i],
        None => s,
    }
}

/// One scalar: quoted (with its closing quote, then only a comment) or plain.
fn scalar(s: &str, line: usize) -> Result<String, SyntaxError> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix('"') {
        let (value, after) = double_quoted(rest, line)?;
        return trailing(value, after, line);
    }
    if let Some(rest) = s.strip_prefix('\'') {
        let (value, after) = single_quoted(rest, line)?;
        return trailing(value, after, line);
    }
    Ok(strip_comment(s).trim().to_string())
}

fn trailing(value: String, after: &str, line: usize) -> Result<String, SyntaxError> {
    let after = after.trim();
    if after.is_empty() || after.starts_with('#') {
        Ok(value)
    } else {
        Err(err(
            line,
            format!("unexpected text after the closing quote: {after:?}"),
        ))
    }
}

/// `"…"` after the opening quote: the value and what follows the closing quote.
fn double_quoted(s: &str, line: usize) -> Result<(String, &str), SyntaxError> {
    let mut out = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &s[i + 1..])),
            '\\' => match chars.next().map(|(_, e)| e) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                Some(other) => {
                    return Err(err(
                        line,
                        format!("unknown escape `\\{other}` in a quoted string"),
                    ))
                }
                None => break,
            },
            c => out.push(c),
        }
    }
    Err(err(line, "a quoted string has no closing `\"`"))
}

/// `'…'` after the opening quote (`''` is one quote).
fn single_quoted(s: &str, line: usize) -> Result<(String, &str), SyntaxError> {
    let mut out = String::new();
    let mut rest = s;
    loop {
        let Some(i) = rest.find('\'') else {
            return Err(err(line, "a quoted string has no closing `'`"));
        };
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(more) = after.strip_prefix('\'') {
            out.push('\'');
            rest = more;
        } else {
            return Ok((out, after));
        }
    }
}

/// The items of a flow list (after its `[`, up to its `]`, then only a comment), each a
/// scalar; empty items are dropped.
fn flow_items(inner: &str, line: usize) -> Result<Vec<String>, SyntaxError> {
    let unclosed = || err(line, "a `[` list must close with `]` on the same line");
    let mut items = Vec::new();
    let mut rest = inner.trim_start();
    loop {
        let (item, after) = if let Some(r) = rest.strip_prefix('"') {
            double_quoted(r, line)?
        } else if let Some(r) = rest.strip_prefix('\'') {
            single_quoted(r, line)?
        } else {
            let end = rest.find([',', ']']).ok_or_else(unclosed)?;
            let plain = rest[..end].trim();
            if plain.contains('[') {
                return Err(err(line, "nested lists are not supported"));
            }
            (plain.to_string(), &rest[end..])
        };
        if !item.is_empty() {
            items.push(item);
        }
        let after = after.trim_start();
        if let Some(r) = after.strip_prefix(',') {
            rest = r.trim_start();
        } else if let Some(r) = after.strip_prefix(']') {
            let r = r.trim();
            if r.is_empty() || r.starts_with('#') {
                return Ok(items);
            }
            return Err(err(line, format!("unexpected text after the list: {r:?}")));
        } else if after.is_empty() {
            return Err(unclosed());
        } else {
            return Err(err(
                line,
                format!("expected `,` or `]` in a list, got {after:?}"),
            ));
        }
    }
}

#[cfg(test)]
#[path = "front_matter_tests.rs"]
mod tests;
