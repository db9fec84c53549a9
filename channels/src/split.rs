//! Splitting long text into platform-sized chunks: on paragraph, then line, then word
//! boundaries; a trailing `Stats:` line is never split and always ends the last chunk.

/// Split `text` into chunks of at most `limit` characters (chars, not bytes).
///
/// Prefers paragraph breaks, then line breaks, then spaces; hard-cuts only a single
/// word longer than `limit`. If the text ends with a `Stats:` line, that line is kept
/// whole (it gets a chunk of its own if it does not fit in the last one).
pub fn split_text(text: &str, limit: usize) -> Vec<String> {
    let limit = limit.max(16);
    let (body, stats) = split_stats_line(text);
    let mut chunks = split_body(body, limit);
    if let Some(stats) = stats {
        match chunks.last_mut() {
            Some(last) if last.chars().count() + 1 + stats.chars().count() <= limit => {
                last.push('\n');
                last.push_str(stats);
            }
            _ => chunks.extend(split_body(stats, limit)),
        }
    }
    if chunks.is_empty() {
        chunks.push(String::new());
    }
    chunks
}

/// Separate a trailing `Stats:` line from the rest of the text.
fn split_stats_line(text: &str) -> (&str, Option<&str>) {
    let trimmed = text.trim_end();
    match trimmed.rfind('\n') {
        Some(i) if trimmed[i + 1..].starts_with("Stats:") => {
            (trimmed[..i].trim_end(), Some(&trimmed[i + 1..]))
        }
        None if trimmed.starts_with("Stats:") => ("", Some(trimmed)),
        _ => (text, None),
    }
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
/// same language, so every chunk has balanced fences. Chunks stay within `limit`.
pub fn split_code_aware(text: &str, limit: usize) -> Vec<String> {
    // Room for the closing "\n```" and a reopening "```lang\n" added around a cut.
    const FENCE_ROOM: usize = 4 + 3 + MAX_FENCE_LANG + 1;
    let limit = limit.max(64);
    let raw = split_text(text, limit - FENCE_ROOM);
    let mut out = Vec::with_capacity(raw.len());
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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_chunk() {
        assert_eq!(split_text("hello", 100), vec!["hello".to_string()]);
    }

    #[test]
    fn splits_on_paragraphs_first() {
        let text = format!("{}\n\n{}", "a".repeat(30), "b".repeat(30));
        assert_eq!(split_text(&text, 40), vec!["a".repeat(30), "b".repeat(30)]);
    }

    #[test]
    fn splits_on_lines_then_words_then_hard() {
        let text = format!("{} {}\n{}", "a".repeat(10), "b".repeat(10), "c".repeat(50));
        let chunks = split_text(&text, 20);
        assert!(chunks.iter().all(|c| c.chars().count() <= 20), "{chunks:?}");
        assert_eq!(
            chunks.concat().replace([' ', '\n'], ""),
            text.replace([' ', '\n'], "")
        );
    }

    #[test]
    fn stats_line_is_kept_whole_and_last() {
        let stats = format!("Stats: runtime 1s • {}", "x".repeat(30));
        let text = format!("Status: success\nResult: {}\n{}", "r".repeat(50), stats);
        let chunks = split_text(&text, 60);
        assert_eq!(chunks.last(), Some(&stats));
        assert!(chunks.iter().all(|c| c.chars().count() <= 60), "{chunks:?}");
    }

    /// Catches: the `Stats:` special case dropped. A short body and a Stats line too long
    /// to join it: the line gets a chunk of its own instead of being cut at a space.
    #[test]
    fn a_stats_line_that_does_not_fit_the_last_chunk_gets_a_chunk_of_its_own() {
        let body = "Result: the child counted the moons ok";
        let stats = "Stats: runtime 5m12s • tokens 12.3k (in 10k / out 2.3k) • est $0.04 • sessionKey agent:main";
        assert_eq!((body.chars().count(), stats.chars().count()), (38, 91));
        let chunks = split_text(&format!("{body}\n{stats}"), 100);
        assert_eq!(chunks, [body, stats]);
    }

    #[test]
    fn an_early_line_break_does_not_make_a_tiny_chunk() {
        let text = format!("Status: success\nResult: {}", "word ".repeat(40));
        let chunks = split_text(&text, 100);
        assert!(
            chunks[0].starts_with("Status: success\nResult: word"),
            "{chunks:?}"
        );
        assert!(chunks[0].chars().count() > 50, "{chunks:?}");
    }

    fn fences_balanced(chunk: &str) -> bool {
        chunk
            .lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count()
            % 2
            == 0
    }

    #[test]
    fn code_aware_split_closes_and_reopens_fences() {
        let code: String = (0..120).map(|i| format!("let x{i} = {i};\n")).collect();
        let text = format!(
            "Here is the code:\n```rust\n{code}```\nThat is all.\nStats: runtime 1s • tokens 1"
        );
        let chunks = split_code_aware(&text, 500);
        assert!(chunks.len() >= 3, "{}", chunks.len());
        for c in &chunks {
            assert!(c.chars().count() <= 500, "{} chars", c.chars().count());
            assert!(fences_balanced(c), "unbalanced: {c}");
        }
        assert!(chunks[1].starts_with("```rust\n"), "{}", chunks[1]);
        assert_eq!(
            chunks.last().expect("chunks").lines().last(),
            Some("Stats: runtime 1s • tokens 1")
        );
        let rejoined: String = chunks
            .concat()
            .replace("```rust", "")
            .replace("```", "")
            .split_whitespace()
            .collect();
        let original: String = text
            .replace("```rust", "")
            .replace("```", "")
            .split_whitespace()
            .collect();
        assert_eq!(rejoined, original);
    }

    /// Catches: reopening a cut fence with its whole opening line, however long, which
    /// pushed the chunk past the limit (found by `code_aware_chunks_fit_and_balance`).
    #[test]
    fn a_long_fence_info_string_is_not_repeated_past_the_limit() {
        let text = "\nStats: runtime 1s • tokens 2\n`````````A```\t```rust\n\n¡0\nStats: runtime 1s • tokens 2A```rust\n";
        let chunks = split_code_aware(text, 1);
        for c in &chunks {
            assert!(
                c.chars().count() <= 64,
                "{} chars: {c:?}",
                c.chars().count()
            );
            assert!(fences_balanced(c), "unbalanced: {c:?}");
        }
        let long = format!("```{}\n{}\n```", "x".repeat(40), "code line\n".repeat(30));
        let chunks = split_code_aware(&long, 64);
        assert!(chunks.len() > 1);
        assert!(chunks[1].starts_with("```\n"), "{:?}", chunks[1]);
        assert!(chunks.iter().all(|c| c.chars().count() <= 64), "{chunks:?}");
    }

    #[test]
    fn multibyte_text_splits_on_char_boundaries() {
        let text = "é".repeat(100);
        let chunks = split_text(&text, 30);
        assert_eq!(chunks.concat(), text);
        assert!(chunks.iter().all(|c| c.chars().count() <= 30));
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Text made of arbitrary Unicode with plenty of the characters the splitter looks at.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                4 => any::<char>().prop_map(String::from),
                2 => Just(" ".to_string()),
                1 => Just("\n".to_string()),
                1 => Just("\n\n".to_string()),
                1 => Just("```rust\n".to_string()),
                1 => Just("\nStats: runtime 1s • tokens 2".to_string()),
                1 => Just("```".to_string()),
                1 => Just("\r\n".to_string()),
                1 => Just("\t".to_string()),
            ],
            0..400,
        )
        .prop_map(|parts| parts.concat())
    }

    fn non_space(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Every chunk fits, and no visible character is lost, added or reordered.
        #[test]
        fn chunks_fit_and_keep_every_character(t in text(), limit in 1usize..300) {
            let chunks = split_text(&t, limit);
            for c in &chunks {
                prop_assert!(c.chars().count() <= limit.max(16), "{c:?}");
            }
            prop_assert_eq!(non_space(&chunks.concat()), non_space(&t));
        }

        /// A trailing Stats line that fits the limit always ends the last chunk whole,
        /// whatever comes before it. (Catches: the Stats special case dropped or cut short.)
        #[test]
        fn a_trailing_stats_line_is_never_split(
            body in text(),
            tail in proptest::collection::vec(any::<char>().prop_filter("one line", |c| *c != '\n'), 0..300),
            limit in 16usize..300,
        ) {
            let stats: String = "Stats: "
                .chars()
                .chain(tail.into_iter().take(limit - 8))
                .chain(['x'])
                .collect();
            let chunks = split_text(&format!("{body}\n{stats}"), limit);
            prop_assert!(chunks.last().is_some_and(|c| c.ends_with(&stats)), "{stats:?} in {chunks:?}");
            for c in &chunks {
                prop_assert!(c.chars().count() <= limit, "{c:?}");
            }
        }

        /// Catches: a chunk cut inside a fence whose opening line carries a long info string
        /// (e.g. "`````````A```\t```rust") reopened with that whole line, past the limit.
        #[test]
        fn code_aware_chunks_fit_and_balance(t in text(), limit in 1usize..300) {
            // Balance the input's fences: a closing fence line when one is left open.
            let fence_lines = t.lines().filter(|l| l.trim_start().starts_with("```")).count();
            let t = if fence_lines % 2 == 0 { t } else { format!("{t}\n```") };
            let chunks = split_code_aware(&t, limit);
            for c in &chunks {
                prop_assert!(c.chars().count() <= limit.max(64), "{} > {}: {c:?}", c.chars().count(), limit.max(64));
                let n = c.lines().filter(|l| l.trim_start().starts_with("```")).count();
                prop_assert!(n % 2 == 0, "unbalanced: {c:?}");
            }
        }
    }
}
