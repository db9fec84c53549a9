//! Telegram's HTML `parse_mode`, checked the way the Bot API documents it: only the supported
//! tags, properly nested, and every `&` part of an entity. Yields the text users would see.
//!
//! Stricter than Telegram in one place: its parser keeps an unknown `&` as a literal, but the
//! docs say it must be escaped, and an adapter that does not escape `&` also leaves `<` raw.
//! A bare `>` is accepted, as Telegram does.

/// Tags the Bot API supports in HTML mode.
const TAGS: &[&str] = &[
    "a",
    "b",
    "blockquote",
    "code",
    "del",
    "em",
    "i",
    "ins",
    "pre",
    "s",
    "span",
    "strike",
    "strong",
    "tg-emoji",
    "tg-spoiler",
    "u",
];

/// The visible text of an HTML-formatted message, or the reason Telegram would give for
/// refusing it (what follows `Bad Request: can't parse entities: `).
pub fn parse(text: &str) -> Result<String, String> {
    let mut plain = String::with_capacity(text.len());
    let mut open: Vec<String> = Vec::new();
    let mut at = 0;
    while let Some(ch) = text[at..].chars().next() {
        match ch {
            '<' => {
                let Some(length) = tag_length(&text[at..]) else {
                    return Err(format!(
                        "Can't find end of the tag starting at byte offset {at}"
                    ));
                };
                let inside = &text[at + 1..at + length - 1];
                if let Some(name) = inside.strip_prefix('/') {
                    close(&mut open, &name.trim().to_ascii_lowercase(), at)?;
                } else {
                    open.push(start_tag(inside, at)?);
                }
                at += length;
            }
            '&' => {
                let (decoded, length) = entity(&text[at..]).ok_or_else(|| {
                    format!("Unescaped \"&\" at byte offset {at}: write it as \"&amp;\"")
                })?;
                plain.push(decoded);
                at += length;
            }
            _ => {
                plain.push(ch);
                at += ch.len_utf8();
            }
        }
    }
    match open.pop() {
        Some(name) => Err(format!(
            "Can't find end tag corresponding to start tag \"{name}\""
        )),
        None => Ok(plain),
    }
}

/// Bytes up to and including the `>` ending the tag that starts `rest`, skipping quoted
/// attribute values.
fn tag_length(rest: &str) -> Option<usize> {
    let mut quote = None;
    for (index, ch) in rest.char_indices().skip(1) {
        match (quote, ch) {
            (None, '"' | '\'') => quote = Some(ch),
            (Some(open), _) if open == ch => quote = None,
            (None, '>') => return Some(index + 1),
            _ => {}
        }
    }
    None
}

fn close(open: &mut Vec<String>, name: &str, at: usize) -> Result<(), String> {
    match open.pop() {
        None => Err(format!("Unexpected end tag at byte offset {at}")),
        Some(expected) if expected != name => Err(format!(
            "Unmatched end tag at byte offset {at}, expected \"</{expected}>\", found \"</{name}>\""
        )),
        Some(_) => Ok(()),
    }
}

/// The name of a start tag (`inside` is what lies between `<` and `>`), checked.
fn start_tag(inside: &str, at: usize) -> Result<String, String> {
    let inside = inside.strip_suffix('/').unwrap_or(inside);
    let (name, attributes) = inside
        .split_once(char::is_whitespace)
        .unwrap_or((inside, ""));
    let name = name.to_ascii_lowercase();
    if !TAGS.contains(&name.as_str()) {
        return Err(format!(
            "Unsupported start tag \"{name}\" at byte offset {at}"
        ));
    }
    let attributes = parse_attributes(attributes)
        .ok_or_else(|| format!("Can't parse attributes of tag \"{name}\" at byte offset {at}"))?;
    if name == "span"
        && !attributes
            .iter()
            .any(|(key, value)| key == "class" && value == "tg-spoiler")
    {
        return Err(format!(
            "Tag \"span\" must have class \"tg-spoiler\" at byte offset {at}"
        ));
    }
    Ok(name)
}

/// `key="value"`, `key='value'`, `key=value` and bare `key` pairs; `None` when malformed.
fn parse_attributes(mut rest: &str) -> Option<Vec<(String, String)>> {
    let mut attributes = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Some(attributes);
        }
        let name_end = rest
            .find(|ch: char| ch == '=' || ch.is_whitespace())
            .unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        if name.is_empty() {
            return None;
        }
        rest = rest[name_end..].trim_start();
        let Some(after) = rest.strip_prefix('=') else {
            attributes.push((name, String::new()));
            continue;
        };
        let after = after.trim_start();
        let (value, remaining) = match after.chars().next() {
            Some(quote @ ('"' | '\'')) => {
                let body = &after[1..];
                let end = body.find(quote)?;
                (&body[..end], &body[end + 1..])
            }
            _ => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        attributes.push((name, value.to_owned()));
        rest = remaining;
    }
}

/// The character an entity at the start of `rest` stands for, and its length in bytes.
fn entity(rest: &str) -> Option<(char, usize)> {
    let end = rest.find(';')?;
    let name = &rest[1..end];
    let decoded = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((decoded, end + 1))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn accepts_supported_markup_and_decodes_entities() {
        assert_eq!(parse("<b>x</b> &amp;").as_deref(), Ok("x &"));
        assert_eq!(
            parse(r#"<a href="https://e.x/?a=1&b=2">link</a> &lt;&gt;&quot;&#65;&#x42; 1 > 0"#)
                .as_deref(),
            Ok("link <>\"AB 1 > 0")
        );
        assert_eq!(
            parse(r#"<pre><code class="language-rust">fn</code></pre><span class="tg-spoiler">s</span>"#)
                .as_deref(),
            Ok("fns")
        );
        assert_eq!(
            parse("<B>x</B><tg-spoiler>y</tg-spoiler>").as_deref(),
            Ok("xy")
        );
    }

    #[test]
    fn rejects_what_telegram_rejects() {
        let cases = [
            (
                "<b>x",
                "Can't find end tag corresponding to start tag \"b\"",
            ),
            (
                "a & b",
                "Unescaped \"&\" at byte offset 2: write it as \"&amp;\"",
            ),
            ("x</b>", "Unexpected end tag at byte offset 1"),
            (
                "<b><i>x</b></i>",
                "Unmatched end tag at byte offset 7, expected \"</i>\", found \"</b>\"",
            ),
            (
                "<div>x</div>",
                "Unsupported start tag \"div\" at byte offset 0",
            ),
            ("a < b > c", "Unsupported start tag \"\" at byte offset 2"),
            (
                "a <b",
                "Can't find end of the tag starting at byte offset 2",
            ),
            (
                "<span>x</span>",
                "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0",
            ),
            (
                "&nbsp;",
                "Unescaped \"&\" at byte offset 0: write it as \"&amp;\"",
            ),
        ];
        for (html, error) in cases {
            assert_eq!(parse(html), Err(error.to_owned()), "{html}");
        }
    }
}
