//! Splitting long text into platform-sized chunks: on paragraph, then line, then word
//! boundaries. A message's footer (the announce's `Stats:` line, carried apart from the
//! text as `OutboundMessage::footer`) is one line that ends the last chunk, whole unless
//! it alone is longer than a chunk. Nothing in the text is treated as a footer.

/// Split `text` into chunks of at most `limit` characters (chars, not bytes), `footer`
/// last.
///
/// Prefers paragraph breaks, then line breaks, then spaces; hard-cuts only a single
/// word longer than `limit`. The footer joins the last chunk when it fits there, else it
/// gets a chunk of its own (cut only if it alone passes `limit`).
pub fn split_text(text: &str, footer: Option<&str>, limit: usize) -> Vec<String> {
    let limit = limit.max(16);
    with_footer(split_body(text, limit), footer, limit)
}

/// The footer as one line: surrounding whitespace dropped, line breaks made spaces.
pub(crate) fn footer_line(footer: &str) -> String {
    footer.trim().replace(['\r', '\n'], " ")
}

/// `chunks` with the footer (if any) ending the last one, or after it when it does not
/// fit; never empty (an empty message is one empty chunk).
fn with_footer(mut chunks: Vec<String>, footer: Option<&str>, limit: usize) -> Vec<String> {
    if let Some(footer) = footer.map(footer_line).filter(|f| !f.is_empty()) {
        match chunks.last_mut() {
            Some(last) if last.chars().count() + 1 + footer.chars().count() <= limit => {
                last.push('\n');
                last.push_str(&footer);
            }
            _ => chunks.extend(split_body(&footer, limit)),
        }
    }
    if chunks.is_empty() {
        chunks.push(String::new());
    }
    chunks
}

fn split_body(text: &str, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text.trim_end();
    while !rest.is_empty() {
        // Byte index of the char boundary at `limit` chars (none: the rest fits).
        let Some((hard, _)) = rest.char_indices().nth(limit) else {
            out.push(rest.to_string());
            break;
        };
        let window = &rest[..hard];
        // A break this early would leave a tiny chunk: prefer a later, weaker break.
        let min = window.len() / 2;
        let cut = window
            .rfind("\n\n")
            .filter(|&i| i >= min)
            .or_else(|| window.rfind('\n').filter(|&i| i >= min))
            .or_else(|| window.rfind(' ').filter(|&i| i >= min))
            .or_else(|| window.rfind('\n').filter(|&i| i > 0))
            .or_else(|| window.rfind(' ').filter(|&i| i > 0))
            .unwrap_or(hard);
        out.push(rest[..cut].trim_end().to_string());
        rest = rest[cut..].trim_start_matches(['\n', ' ']);
    }
    out
}

/// Longest language name a reopened fence carries; a longer (or odd) info string is
/// reopened as a bare fence, so the reopening line always fits the room kept for it.
const MAX_FENCE_LANG: usize = 16;

/// The line that reopens a fence cut by a chunk boundary: "```" and the opening fence's
/// language when it is a plain name of at most [`MAX_FENCE_LANG`] characters.
fn reopening_fence(info: &str) -> String {
    let lang = info.split_whitespace().next().unwrap_or("");
    let plain = lang.len() <= MAX_FENCE_LANG
        && lang
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '_' | '.' | '#'));
    if plain {
        format!("```{lang}")
    } else {
        "```".to_string()
    }
}

/// Like [`split_text`], for platforms that render Markdown code fences (Discord): a
/// chunk that ends inside a ``` block closes it, and the next chunk reopens it with the
/// same language, so every chunk of the text has balanced fences. The footer comes after
/// any closing fence. Chunks stay within `limit`.
pub fn split_code_aware(text: &str, footer: Option<&str>, limit: usize) -> Vec<String> {
    // Room for the closing "\n```" and a reopening "```lang\n" added around a cut.
    const FENCE_ROOM: usize = 4 + 3 + MAX_FENCE_LANG + 1;
    let limit = limit.max(64);
    let raw = split_body(text, limit - FENCE_ROOM);
    let mut out = Vec::with_capacity(raw.len() + 1);
    let mut open: Option<String> = None; // the fence line that is open, e.g. "```rust"
    for chunk in raw {
        let mut piece = String::new();
        if let Some(fence) = &open {
            piece.push_str(fence);
            piece.push('\n');
        }
        piece.push_str(&chunk);
        for line in chunk.lines() {
            let t = line.trim_start();
            if let Some(info) = t.strip_prefix("```") {
                open = match open {
                    Some(_) => None,
                    None => Some(reopening_fence(info)),
                };
            }
        }
        if open.is_some() {
            piece.push_str("\n```");
        }
        out.push(piece);
    }
    with_footer(out, footer, limit)
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
