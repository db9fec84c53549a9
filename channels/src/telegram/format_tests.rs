//! Tests of the Markdown → Telegram HTML converter: examples, and the property that its
//! output is always HTML Telegram accepts.

use super::*;

mod examples {
    use super::*;

    #[test]
    fn converts_common_markdown() {
        assert_eq!(
            to_html("**bold** and *it* and `a<b`"),
            "<b>bold</b> and <i>it</i> and <code>a&lt;b</code>"
        );
        assert_eq!(
            to_html("see [docs](https://x.dev/a?b=1&c=2)"),
            "see <a href=\"https://x.dev/a?b=1&amp;c=2\">docs</a>"
        );
        assert_eq!(
            to_html("# Title\nplain & <tag>"),
            "<b>Title</b>\nplain &amp; &lt;tag&gt;"
        );
        assert_eq!(
            to_html("```rust\nfn a() {}\n```\nafter"),
            "<pre><code class=\"language-rust\">fn a() {}</code></pre>\nafter"
        );
        assert_eq!(to_html("~~old~~ new"), "<s>old</s> new");
    }

    #[test]
    fn leaves_unbalanced_and_snake_case_alone() {
        assert_eq!(
            to_html("a * b and snake_case_name"),
            "a * b and snake_case_name"
        );
        assert_eq!(to_html("**open"), "**open");
        assert_eq!(to_html("2 * 3 * 4"), "2 * 3 * 4");
        assert_eq!(to_html("_under_"), "<i>under</i>");
    }

    /// Catches: links Telegram refuses or cannot render: an href with a space, an empty
    /// label, code inside a link's label.
    #[test]
    fn only_well_formed_links_become_links() {
        assert_eq!(to_html("[x](http://a b)"), "[x](http://a b)");
        assert_eq!(to_html("[](https://x.dev)"), "[](https://x.dev)");
        assert_eq!(
            to_html("[`a` **b**](https://x.dev)"),
            "<a href=\"https://x.dev\">`a` <b>b</b></a>"
        );
    }

    /// Catches: the hand-written parser's misreadings of CommonMark: a code span opened
    /// with two backticks (so it may hold one), a fence line with an info string inside a
    /// block taken for its end, and list and quote markers kept as the text they are.
    #[test]
    fn code_spans_and_fences_follow_commonmark() {
        assert_eq!(to_html("``a ` b``"), "<code>a ` b</code>");
        assert_eq!(
            to_html("```\n```rust\nx\n```\nafter"),
            "<pre>```rust\nx</pre>\nafter"
        );
        assert_eq!(
            to_html("- **one**\n> two & three"),
            "- <b>one</b>\n&gt; two &amp; three"
        );
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert_eq!(to_html("```\nx < y"), "<pre>x &lt; y</pre>");
    }

    /// 100,000 levels of every construct that nests convert, the text kept. Catches: a
    /// recursive walk of the parsed Markdown (a stack overflow ends the daemon).
    #[test]
    fn deep_nestings_convert() {
        const N: usize = 100_000;
        let indented_list: String = (0..N)
            .map(|i| format!("{}- x\n", " ".repeat(i % 64)))
            .collect();
        for (what, text) in [
            ("quotes", ">".repeat(N) + " deep"),
            ("lists", "- ".repeat(N) + "deep"),
            ("indented lists", indented_list + "deep"),
            ("emphasis", "*".repeat(N) + "deep" + &"*".repeat(N)),
            ("strong", "**".repeat(N) + "deep" + &"**".repeat(N)),
            (
                "links",
                "[".repeat(N) + "deep" + &"](https://x.dev)".repeat(N),
            ),
            ("backticks", "`".repeat(N) + "deep"),
            ("mixed", "> - *[**~~".repeat(N / 10) + "deep"),
        ] {
            let out = to_html(&text);
            assert!(out.contains("deep"), "{what}");
        }
    }
}

mod properties {
    use proptest::prelude::*;
    use switchboard_testkit::fake_telegram::html;

    use super::*;

    /// Markdown-ish text: arbitrary Unicode mixed with every marker the converter reads.
    fn markdown() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                6 => any::<char>().prop_map(String::from),
                2 => Just(" ".to_string()),
                1 => Just("\n".to_string()),
                6 => prop::sample::select(vec![
                    "**", "__", "~~", "*", "_", "`", "```", "```rust", "```c++ x", "[", "]", "(",
                    ")", "](", "](https://x.dev/a?b=1&c=2)", "](tg://user?id=1)", "](http://a b)",
                    "](javascript:alert(1))", "](https://\"q\"<>)", "# ", "## ", "### ", "&", "<",
                    ">", "\"", "'", "&amp;", "<b>", "</i>",
                ])
                .prop_map(String::from),
            ],
            0..60,
        )
        .prop_map(|parts| parts.concat())
    }

    /// Where a tag may stand, beyond what the HTML parser checks: nothing inside `code`;
    /// only `code` inside `pre`; `pre` only at the top; no link, code or pre inside a link;
    /// a link always with a valid `href`.
    fn check_structure(out: &str) -> Result<(), String> {
        let mut open: Vec<String> = Vec::new();
        let mut rest = out;
        while let Some(at) = rest.find('<') {
            let end = rest[at..].find('>').ok_or("unterminated tag")? + at;
            let tag = &rest[at + 1..end];
            rest = &rest[end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                if open.pop().as_deref() != Some(name) {
                    return Err(format!("misnested </{name}>"));
                }
                continue;
            }
            let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
            let parent = open.last().map(String::as_str);
            match (parent, name) {
                (Some("code"), _) => return Err(format!("<{name}> inside <code>")),
                (Some("pre"), "code") => {}
                (Some("pre"), _) => return Err(format!("<{name}> inside <pre>")),
                (Some(_), "pre") => return Err("<pre> inside another tag".into()),
                _ => {}
            }
            if open.iter().any(|t| t == "a") && matches!(name, "a" | "code" | "pre") {
                return Err(format!("<{name}> inside a link"));
            }
            if name == "a" {
                let href = attrs
                    .strip_prefix("href=\"")
                    .and_then(|v| v.strip_suffix('"'))
                    .ok_or_else(|| format!("a link without href: {tag}"))?;
                let url = html::parse(href)?;
                let scheme_ok = ["http://", "https://", "tg://"]
                    .iter()
                    .any(|s| url.starts_with(s));
                if !scheme_ok || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
                    return Err(format!("invalid href {url:?}"));
                }
            }
            open.push(name.to_string());
        }
        if open.is_empty() {
            Ok(())
        } else {
            Err(format!("unclosed {open:?}"))
        }
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: output Telegram refuses ("can't parse entities": a tag it does not
        /// support, misnested or unclosed tags, a raw `&` or `<`) or entities it cannot
        /// nest (code in a link), and links to what is not a URL.
        #[test]
        fn output_is_always_valid_telegram_html(text in markdown()) {
            let out = to_html(&text);
            if let Err(e) = html::parse(&out) {
                return Err(TestCaseError::fail(format!("{e}: {out:?}")));
            }
            if let Err(e) = check_structure(&out) {
                return Err(TestCaseError::fail(format!("{e}: {out:?}")));
            }
        }
    }
}
