//! Tests of the splitter: examples, and properties over arbitrary text and footers.

use super::*;

mod examples {
    use super::*;

    #[test]
    fn short_text_is_one_chunk() {
        assert_eq!(split_text("hello", None, 100), vec!["hello".to_string()]);
    }

    #[test]
    fn splits_on_paragraphs_first() {
        let text = format!("{}\n\n{}", "a".repeat(30), "b".repeat(30));
        assert_eq!(
            split_text(&text, None, 40),
            vec!["a".repeat(30), "b".repeat(30)]
        );
    }

    #[test]
    fn splits_on_lines_then_words_then_hard() {
        let text = format!("{} {}\n{}", "a".repeat(10), "b".repeat(10), "c".repeat(50));
        let chunks = split_text(&text, None, 20);
        assert!(chunks.iter().all(|c| c.chars().count() <= 20), "{chunks:?}");
        assert_eq!(
            chunks.concat().replace([' ', '\n'], ""),
            text.replace([' ', '\n'], "")
        );
    }

    #[test]
    fn stats_line_is_kept_whole_and_last() {
        let stats = format!("Stats: runtime 1s • {}", "x".repeat(30));
        let text = format!("Status: success\nResult: {}", "r".repeat(50));
        let chunks = split_text(&text, Some(&stats), 60);
        assert_eq!(chunks.last(), Some(&stats));
        assert!(chunks.iter().all(|c| c.chars().count() <= 60), "{chunks:?}");
    }

    /// Catches: the footer cut at a space to fill the last chunk. A short body and a footer
    /// too long to join it: the footer gets a chunk of its own.
    #[test]
    fn a_footer_that_does_not_fit_the_last_chunk_gets_a_chunk_of_its_own() {
        let body = "Result: the child counted the moons ok";
        let stats = "Stats: runtime 5m12s • tokens 12.3k (in 10k / out 2.3k) • est $0.04 • sessionKey agent:main";
        assert_eq!((body.chars().count(), stats.chars().count()), (38, 91));
        let chunks = split_text(body, Some(stats), 100);
        assert_eq!(chunks, [body, stats]);
    }

    #[test]
    fn an_early_line_break_does_not_make_a_tiny_chunk() {
        let text = format!("Status: success\nResult: {}", "word ".repeat(40));
        let chunks = split_text(&text, None, 100);
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
        let text = format!("Here is the code:\n```rust\n{code}```\nThat is all.");
        let chunks = split_code_aware(&text, Some("Stats: runtime 1s • tokens 1"), 500);
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
        let original: String = format!("{text}\nStats: runtime 1s • tokens 1")
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
        let chunks = split_code_aware(text, None, 1);
        for c in &chunks {
            assert!(
                c.chars().count() <= 64,
                "{} chars: {c:?}",
                c.chars().count()
            );
            assert!(fences_balanced(c), "unbalanced: {c:?}");
        }
        let long = format!("```{}\n{}\n```", "x".repeat(40), "code line\n".repeat(30));
        let chunks = split_code_aware(&long, None, 64);
        assert!(chunks.len() > 1);
        assert!(chunks[1].starts_with("```\n"), "{:?}", chunks[1]);
        assert!(chunks.iter().all(|c| c.chars().count() <= 64), "{chunks:?}");
    }

    /// Catches: the splitter finding a footer by prefix in the text: a reply whose last
    /// line starts with "Stats:" had that line taken out of the text and given a chunk of
    /// its own, as if it were the announce's footer. Only `footer` is a footer now.
    #[test]
    fn a_last_line_starting_with_stats_is_just_text() {
        let text = format!("{} q\nStats: a b c d e f", "p".repeat(18));
        assert_eq!(
            split_text(&text, None, 20),
            vec!["p".repeat(18), "q\nStats: a b c d e f".to_string()]
        );
        assert_eq!(
            split_text(
                &format!("{} q", "p".repeat(18)),
                Some("Stats: a b c d e f"),
                20
            ),
            vec![
                format!("{} q", "p".repeat(18)),
                "Stats: a b c d e f".to_string()
            ]
        );
    }

    /// Catches: a footer placed inside a code block left open by the text (before the
    /// fence that closes the chunk), and one mixed into the text's last chunk when it is
    /// too long to fit any chunk.
    #[test]
    fn the_footer_follows_the_closing_fence() {
        let chunks = split_code_aware("look:\n```rust\nlet x = 1;", Some("Stats: 1s\n"), 200);
        assert_eq!(
            chunks,
            vec!["look:\n```rust\nlet x = 1;\n```\nStats: 1s".to_string()]
        );
        let chunks = split_code_aware(&"word ".repeat(60), Some(&"s".repeat(70)), 64);
        // Longer than a chunk: it follows the text, cut only because it must be.
        assert_eq!(chunks[chunks.len() - 2..], ["s".repeat(64), "s".repeat(6)]);
    }

    #[test]
    fn multibyte_text_splits_on_char_boundaries() {
        let text = "é".repeat(100);
        let chunks = split_text(&text, None, 30);
        assert_eq!(chunks.concat(), text);
        assert!(chunks.iter().all(|c| c.chars().count() <= 30));
    }
}

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

    /// A footer: mostly a stats line, sometimes arbitrary text (with line breaks, which
    /// the splitter folds), sometimes blank.
    fn footer() -> impl Strategy<Value = Option<String>> {
        prop_oneof![
            1 => Just(None),
            3 => text().prop_map(|t| Some(format!("Stats: {t}"))),
            1 => text().prop_map(Some),
        ]
    }

    fn non_space(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    /// Whether `chunks` end with the footer, whole, when it fits a chunk.
    fn footer_is_last(chunks: &[String], footer: Option<&str>, limit: usize) -> bool {
        let Some(line) = footer.map(footer_line).filter(|f| !f.is_empty()) else {
            return true;
        };
        line.chars().count() > limit
            || chunks
                .last()
                .is_some_and(|last| last.ends_with(line.as_str()))
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Every chunk fits, no visible character is lost, added or reordered, and the
        /// footer ends the last chunk, whole, whenever it fits one.
        #[test]
        fn chunks_fit_and_keep_every_character(t in text(), footer in footer(), limit in 1usize..300) {
            let chunks = split_text(&t, footer.as_deref(), limit);
            for c in &chunks {
                prop_assert!(c.chars().count() <= limit.max(16), "{c:?}");
            }
            let whole = format!("{t}{}", footer.as_deref().unwrap_or(""));
            prop_assert_eq!(non_space(&chunks.concat()), non_space(&whole));
            prop_assert!(footer_is_last(&chunks, footer.as_deref(), limit.max(16)), "{chunks:?}");
        }

        /// Catches: a chunk cut inside a fence whose opening line carries a long info string
        /// (e.g. "`````````A```\t```rust") reopened with that whole line, past the limit.
        #[test]
        fn code_aware_chunks_fit_and_balance(t in text(), footer in footer(), limit in 1usize..300) {
            // Balance the input's fences: a closing fence line when one is left open.
            let fence_lines = t.lines().filter(|l| l.trim_start().starts_with("```")).count();
            let t = if fence_lines % 2 == 0 { t } else { format!("{t}\n```") };
            // A footer that is itself a fence line would unbalance its chunk: footers are
            // status lines, so only those that do not open with "```" are checked here.
            let footer = footer.filter(|f| !footer_line(f).starts_with("```"));
            let chunks = split_code_aware(&t, footer.as_deref(), limit);
            // The pieces of a footer longer than a chunk are cut anywhere: not checked.
            let cut_footer = footer
                .as_deref()
                .map(footer_line)
                .filter(|f| f.chars().count() > limit.max(64))
                .map_or(0, |f| split_body(&f, limit.max(64)).len());
            for (i, c) in chunks.iter().enumerate() {
                prop_assert!(c.chars().count() <= limit.max(64), "{} > {}: {c:?}", c.chars().count(), limit.max(64));
                if i + cut_footer >= chunks.len() {
                    continue;
                }
                let n = c.lines().filter(|l| l.trim_start().starts_with("```")).count();
                prop_assert!(n % 2 == 0, "unbalanced: {c:?}");
            }
            prop_assert!(footer_is_last(&chunks, footer.as_deref(), limit.max(64)), "{chunks:?}");
        }
    }
}
