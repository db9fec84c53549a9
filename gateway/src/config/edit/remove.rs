//! Planning an `unset`: the entry goes, with its line when it had the line to itself
//! (and a comment after it on that line), and with the comma before it when it was the
//! last entry without one, so no trailing comma is left where the file had none.

use super::super::error::Seg;
use super::cst::{self, Entry, Kind, Node};
use super::ops::{is_block, line_start, starts_line, Edit};
use super::EditError;

/// Plans `unset path` on `src`; `None` when the path is not there.
pub(crate) fn plan_unset(src: &str, path: &[Seg]) -> Result<Option<Vec<Edit>>, EditError> {
    let Some(root) = cst::parse(src)? else {
        return Ok(None);
    };
    let Some((last, parents)) = path.split_last() else {
        return Ok(None);
    };
    let mut node = &root;
    for seg in parents {
        node = match (&node.kind, seg) {
            (Kind::Object(members), Seg::Key(k)) => {
                match members.iter().rev().find(|m| &m.key == k) {
                    Some(m) => &m.value,
                    None => return Ok(None),
                }
            }
            (Kind::Array(elements), Seg::Index(i)) => match elements.get(*i) {
                Some(e) => &e.value,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
    }
    Ok(match (&node.kind, last) {
        (Kind::Object(members), Seg::Key(k)) => members
            .iter()
            .rposition(|m| &m.key == k)
            .map(|i| remove(src, node, members, i)),
        (Kind::Array(elements), Seg::Index(i)) if *i < elements.len() => {
            Some(remove(src, node, elements, *i))
        }
        _ => None,
    })
}

/// After `at`: spaces and tabs, then comments that end on the same line.
fn rest_of_line(src: &str, mut at: usize) -> usize {
    let b = src.as_bytes();
    loop {
        while matches!(b.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        if b.get(at) == Some(&b'/') && b.get(at + 1) == Some(&b'/') {
            return cst::line_comment_end(src, at);
        }
        if b.get(at) == Some(&b'/') && b.get(at + 1) == Some(&b'*') {
            match src[at + 2..].find("*/") {
                Some(i) if !src[at..at + 2 + i].contains('\n') => at += 2 + i + 2,
                _ => return at,
            }
            continue;
        }
        return at;
    }
}

/// Spaces and tabs after `at`.
fn spaces(src: &str, at: usize) -> usize {
    at + src[at..].len() - src[at..].trim_start_matches([' ', '\t']).len()
}

/// Whether `src[from..to]` is only whitespace and commas.
fn only_blank_or_commas(src: &str, from: usize, to: usize) -> bool {
    src[from..to].chars().all(|c| c.is_whitespace() || c == ',')
}

fn remove<E: Entry>(src: &str, container: &Node, entries: &[E], i: usize) -> Vec<Edit> {
    let e = &entries[i];
    let start = e.entry_start();
    let after = e.entry_comma().map_or(e.entry_value().end, |c| c + 1);
    let mut edits = Vec::new();
    // The last entry without a comma: its predecessor's comma goes too, so no trailing
    // comma is left where the file had none.
    let prev_comma = if e.entry_comma().is_none() && i > 0 {
        entries[i - 1].entry_comma()
    } else {
        None
    };
    if is_block(src, container) && starts_line(src, start) {
        let end = rest_of_line(src, after);
        let line_end = match src.as_bytes().get(end) {
            Some(b'\n') => Some(end + 1),
            Some(b'\r') if src.as_bytes().get(end + 1) == Some(&b'\n') => Some(end + 2),
            None => Some(end),
            _ => None,
        };
        match line_end {
            Some(line_end) => edits.push(Edit {
                start: line_start(src, start),
                end: line_end,
                text: String::new(),
            }),
            None => edits.push(Edit {
                start,
                end: spaces(src, after),
                text: String::new(),
            }),
        }
        if let Some(c) = prev_comma {
            edits.push(Edit {
                start: c,
                end: c + 1,
                text: String::new(),
            });
        }
        return edits;
    }
    let open = container.start;
    let close = container.end - 1;
    if entries.len() == 1
        && only_blank_or_commas(src, open + 1, start)
        && only_blank_or_commas(src, after, close)
    {
        return vec![Edit {
            start: open + 1,
            end: close,
            text: String::new(),
        }];
    }
    if i + 1 < entries.len() {
        let next = entries[i + 1].entry_start();
        let end = if only_blank_or_commas(src, after, next) {
            next
        } else {
            spaces(src, after)
        };
        return vec![Edit {
            start,
            end,
            text: String::new(),
        }];
    }
    if let Some(prev) = i.checked_sub(1).map(|p| &entries[p]) {
        let prev_end = prev.entry_value().end;
        if only_blank_or_commas(src, prev_end, start) {
            return vec![Edit {
                start: prev_end,
                end: e.entry_value().end,
                text: String::new(),
            }];
        }
    }
    edits.push(Edit {
        start,
        end: spaces(src, after),
        text: String::new(),
    });
    if let Some(c) = prev_comma {
        edits.push(Edit {
            start: c,
            end: c + 1,
            text: String::new(),
        });
    }
    edits
}
