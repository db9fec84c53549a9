//! The text of a progress line (docs/subagents.md, "Progress lines"): model output made
//! into one short line a chat can show. Hostile input is the normal case: line breaks and
//! tabs fold to spaces, control and bidirectional-override characters are dropped, runs
//! of spaces collapse, and the line is cut to [`MAX_LINE`] characters.

use crate::store::Outcome;

/// Longest progress line, in characters (an ellipsis marks a cut).
pub const MAX_LINE: usize = 200;
/// Longest label shown in front of a line, in characters.
pub const MAX_LABEL: usize = 40;

/// `text` as one clean line of at most `max` characters; `None` when nothing is left.
pub fn line(text: &str, max: usize) -> Option<String> {
    let mut out = String::new();
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if dropped(c) {
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    if out.is_empty() {
        return None;
    }
    let max = max.max(2);
    if out.chars().count() > max {
        out = out
            .chars()
            .take(max - 1)
            .collect::<String>()
            .trim_end()
            .to_string();
        out.push('…');
    }
    Some(out)
}

/// Characters never shown: controls (C0, DEL, C1) and the marks that reorder or hide
/// text (bidirectional overrides and isolates, zero-width spaces), which a line could use
/// to pass itself off as something else. The zero-width joiner stays (emoji use it).
fn dropped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'
                | '\u{200C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// What the chat shows: the child's label, then its line.
pub fn shown(label: &str, line: &str) -> String {
    format!("⏳ {}: {line}", clean_label(label))
}

/// The line once the child ended: how it ended.
pub fn ended(label: &str, outcome: Option<Outcome>) -> String {
    let (mark, how) = match outcome {
        Some(Outcome::Success) => ("✅", "done"),
        Some(Outcome::Error) | None => ("❌", "failed"),
        Some(Outcome::Timeout) => ("⌛", "timed out"),
        Some(Outcome::Cancelled) => ("⏹️", "stopped"),
        Some(Outcome::Interrupted) => ("⏹️", "interrupted by a restart"),
    };
    format!("{mark} {}: {how}", clean_label(label))
}

fn clean_label(label: &str) -> String {
    line(label, MAX_LABEL).unwrap_or_else(|| "sub-agent".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_are_folded_cleaned_and_cut() {
        assert_eq!(
            line("  reading\r\n\tfile\u{202E}  a.rs\u{0007} ", MAX_LINE).as_deref(),
            Some("reading file a.rs")
        );
        assert_eq!(line(" \n\u{200B}\t", MAX_LINE), None);
        let long = "é".repeat(500);
        let cut = line(&long, MAX_LINE).unwrap_or_default();
        assert_eq!(cut.chars().count(), MAX_LINE);
        assert!(cut.ends_with('…'));
        assert_eq!(shown("mars", "step 2"), "⏳ mars: step 2");
        assert_eq!(shown("\n", "x"), "⏳ sub-agent: x");
        assert_eq!(ended("mars", Some(Outcome::Success)), "✅ mars: done");
        assert_eq!(ended("mars", Some(Outcome::Timeout)), "⌛ mars: timed out");
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: a newline, control or reordering character reaching a chat, a line
        /// over its bound, spaces at its ends, or a panic on any input.
        #[test]
        fn any_text_becomes_one_bounded_clean_line(text in "(?s).{0,600}", max in 0usize..300) {
            if let Some(l) = line(&text, max) {
                prop_assert!(l.chars().count() <= max.max(2));
                prop_assert!(!l.is_empty());
                prop_assert_eq!(l.trim(), l.as_str());
                prop_assert!(!l.contains("  "));
                prop_assert!(l.chars().all(|c| !dropped(c) && (c == ' ' || !c.is_whitespace())));
                // Cleaning a clean line changes nothing.
                prop_assert_eq!(line(&l, max), Some(l.clone()));
            }
        }

        /// Catches: visible text lost from a short line (only spacing may change).
        #[test]
        fn short_printable_text_keeps_its_words(words in prop::collection::vec("[a-zA-Z0-9.,:é🙂]{1,8}", 1..10)) {
            let text = words.join(" \n ");
            prop_assert_eq!(line(&text, MAX_LINE), Some(words.join(" ")));
        }
    }
}
