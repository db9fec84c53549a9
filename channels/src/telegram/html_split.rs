//! Splitting one message's Telegram HTML (as `format::to_html` writes it) into parts that
//! each fit Telegram's limit on visible text: every part is balanced HTML — the tags open
//! at a cut are closed at the end of the part and reopened at the start of the next — so
//! a `<pre>` code block longer than a part continues as a code block in the next part,
//! and the parts' visible texts put end to end are the whole message's text, less the
//! whitespace that ended each part (the break it was cut at, which Telegram would trim).
//!
//! Cuts prefer a paragraph break, then a line break, then a space, in the second half of
//! a part; a run of text with none of them is cut hard (never inside a character or an
//! entity such as `&amp;`). Lengths are counted in UTF-16 code units, as Telegram counts.

/// One piece of the HTML: a tag, or one visible character with its source (`&lt;`).
#[derive(Debug, Clone, Copy)]
enum Piece<'a> {
    Open { name: &'a str, raw: &'a str },
    Close { raw: &'a str },
    Char { ch: char, raw: &'a str },
}

/// Split `html` into parts of at most `limit` visible UTF-16 units (at least 16). No cut
/// leaves a part of whitespace only, but a run of whitespace longer than a part is cut
/// hard, and a part of only whitespace is left out (Telegram refuses an empty message).
/// Always at least one part.
pub fn split_html(html: &str, limit: usize) -> Vec<String> {
    let limit = limit.max(16);
    let pieces = pieces(html);
    let mut parts = Vec::new();
    let mut open: Vec<(&str, &str)> = Vec::new(); // (name, raw opening tag)
    let mut start = 0;
    while start < pieces.len() {
        let end = cut_point(&pieces[start..], limit) + start;
        let mut part: String = open.iter().map(|(_, raw)| *raw).collect();
        let mut visible = String::new();
        // Whitespace ending a part is dropped (the break the cut was made at; Telegram
        // would trim it): the tags after it stay.
        let last_text = pieces[start..end]
            .iter()
            .rposition(|p| matches!(p, Piece::Char { ch, .. } if !ch.is_whitespace()))
            .map_or(start, |i| start + i + 1);
        for (i, piece) in pieces[start..end].iter().enumerate() {
            let trailing = start + i >= last_text;
            match *piece {
                Piece::Open { name, raw } => {
                    open.push((name, raw));
                    part.push_str(raw);
                }
                Piece::Close { raw } => {
                    open.pop();
                    part.push_str(raw);
                }
                Piece::Char { .. } if trailing => {}
                Piece::Char { ch, raw } => {
                    visible.push(ch);
                    part.push_str(raw);
                }
            }
        }
        for (name, _) in open.iter().rev() {
            part.push_str("</");
            part.push_str(name);
            part.push('>');
        }
        if !visible.trim().is_empty() {
            parts.push(part);
        }
        start = end;
    }
    if parts.is_empty() {
        parts.push(String::new());
    }
    parts
}

/// How many of `pieces` the next part takes: all when their text fits `limit`, else up
/// to the best break, plus the closing tags right after it (so no part starts with a
/// tag closed as soon as it is reopened). At least one character.
fn cut_point(pieces: &[Piece<'_>], limit: usize) -> usize {
    let mut used = 0;
    // (index after the break, visible units before it, strength: 3 paragraph, 2 line, 1 space)
    let mut breaks: Vec<(usize, usize, u8)> = Vec::new();
    let mut prev_newline = false;
    let mut seen_text = false;
    let mut hard = pieces.len();
    for (i, piece) in pieces.iter().enumerate() {
        let Piece::Char { ch, .. } = *piece else {
            continue;
        };
        let units = ch.len_utf16();
        if used + units > limit {
            hard = i;
            break;
        }
        used += units;
        let strength = match ch {
            '\n' if prev_newline => 3,
            '\n' => 2,
            ' ' => 1,
            _ => 0,
        };
        prev_newline = ch == '\n';
        // A break before any visible character would leave a part of whitespace only.
        if strength > 0 && seen_text {
            breaks.push((i + 1, used, strength));
        }
        seen_text |= !ch.is_whitespace();
    }
    if hard == pieces.len() {
        return hard;
    }
    let min = limit / 2;
    let best = (1..=3)
        .rev()
        .find_map(|s| {
            breaks
                .iter()
                .rev()
                .find(|b| b.2 == s && b.1 >= min)
                .map(|b| b.0)
        })
        .or_else(|| breaks.iter().rev().find(|b| b.2 >= 2).map(|b| b.0))
        .or_else(|| breaks.last().map(|b| b.0));
    let mut cut = best.unwrap_or(hard);
    if !pieces[..cut]
        .iter()
        .any(|p| matches!(p, Piece::Char { .. }))
    {
        // Tags only so far: take at least the first character.
        cut = pieces
            .iter()
            .position(|p| matches!(p, Piece::Char { .. }))
            .map_or(pieces.len(), |i| i + 1);
    }
    // A tag opened right at the cut opens in the next part instead.
    while cut > 1 && matches!(pieces[cut - 1], Piece::Open { .. }) {
        cut -= 1;
    }
    while let Some(Piece::Close { .. }) = pieces.get(cut) {
        cut += 1;
    }
    cut
}

/// The parts of a message: `text` (Markdown) as Telegram HTML split to `limit` visible
/// UTF-16 units, and `footer` (one line, as text) ending the last part, or in a part of
/// its own when it does not fit there.
pub fn message_parts(text: &str, footer: Option<&str>, limit: usize) -> Vec<String> {
    let limit = limit.max(16);
    let mut parts = split_html(&super::format::to_html(text.trim_end()), limit);
    let Some(footer) = footer
        .map(crate::split::footer_line)
        .filter(|f| !f.is_empty())
    else {
        return parts;
    };
    let html = super::format::escape(&footer);
    let units = |s: &str| s.encode_utf16().count();
    match parts.last_mut() {
        Some(last) if last.is_empty() => *last = html,
        Some(last) if units(&visible_text(last)) + 1 + units(&footer) <= limit => {
            last.push('\n');
            last.push_str(&html);
        }
        _ => parts.extend(split_html(&html, limit)),
    }
    parts
}

/// `html` as pieces. A `<` without a closing `>` and an `&` that starts no entity are
/// read as characters (`format::to_html` writes neither).
fn pieces(html: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::with_capacity(html.len());
    let mut at = 0;
    while let Some(ch) = html[at..].chars().next() {
        let rest = &html[at..];
        let len = match ch {
            '<' => match rest.find('>') {
                Some(end) => {
                    let raw = &rest[..=end];
                    let inside = &raw[1..raw.len() - 1];
                    match inside.strip_prefix('/') {
                        Some(_) => out.push(Piece::Close { raw }),
                        None => {
                            let name = inside.split([' ', '\t', '\n']).next().unwrap_or(inside);
                            out.push(Piece::Open { name, raw });
                        }
                    }
                    raw.len()
                }
                None => {
                    out.push(Piece::Char { ch, raw: "&lt;" });
                    1
                }
            },
            '&' => match entity(rest) {
                Some((decoded, len)) => {
                    out.push(Piece::Char {
                        ch: decoded,
                        raw: &rest[..len],
                    });
                    len
                }
                None => {
                    out.push(Piece::Char { ch, raw: "&amp;" });
                    1
                }
            },
            _ => {
                out.push(Piece::Char {
                    ch,
                    raw: &rest[..ch.len_utf8()],
                });
                ch.len_utf8()
            }
        };
        at += len;
    }
    out
}

/// The character an entity at the start of `s` stands for, and its length in bytes: the
/// named ones `escape` writes and numeric ones.
fn entity(s: &str) -> Option<(char, usize)> {
    let end = s.get(..12).unwrap_or(s).find(';')?;
    let name = &s[1..end];
    let ch = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        _ => {
            let code = match name.strip_prefix("#x").or_else(|| name.strip_prefix("#X")) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => name.strip_prefix('#')?.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((ch, end + 1))
}

/// The visible text of `html` (tags dropped, entities decoded): what a part says when
/// Telegram refuses its HTML and it goes as plain text.
pub fn visible_text(html: &str) -> String {
    pieces(html)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Char { ch, .. } => Some(ch),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[path = "html_split_tests.rs"]
mod tests;
