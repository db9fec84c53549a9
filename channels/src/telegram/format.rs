//! Markdown-ish model output → Telegram HTML: code blocks, inline code, bold, italic,
//! strikethrough, links and headings; everything else escaped. Unbalanced markers stay
//! literal, so the output is always valid for Telegram's HTML parser.

/// Escape text for Telegram HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Convert one message's text.
pub fn to_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut lines = text.split('\n').peekable();
    let mut first = true;
    while let Some(line) = lines.next() {
        if !first {
            out.push('\n');
        }
        first = false;
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            // A fenced block: collect until the closing fence (or the end of the text).
            let mut body = Vec::new();
            for inner in lines.by_ref() {
                if inner.trim_start().starts_with("```") {
                    break;
                }
                body.push(inner);
            }
            let lang = lang.trim();
            let code = escape(&body.join("\n"));
            if lang.is_empty()
                || !lang
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '_')
            {
                out.push_str(&format!("<pre>{code}</pre>"));
            } else {
                out.push_str(&format!(
                    "<pre><code class=\"language-{lang}\">{code}</code></pre>"
                ));
            }
            continue;
        }
        let trimmed = line.trim_start();
        let heading = trimmed
            .strip_prefix("### ")
            .or_else(|| trimmed.strip_prefix("## "))
            .or_else(|| trimmed.strip_prefix("# "));
        match heading {
            Some(h) => out.push_str(&format!("<b>{}</b>", inline(h, false))),
            None => out.push_str(&inline(line, false)),
        }
    }
    out
}

/// Whether `url` may be a link's `href`: an http(s) or tg URL, with no whitespace or control
/// characters (Telegram refuses a link it cannot parse as a URL).
fn linkable(url: &str) -> bool {
    ["http://", "https://", "tg://"]
        .iter()
        .any(|scheme| url.len() > scheme.len() && url.starts_with(scheme))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Inline markup of one line. Inside a link's label (`in_link`) there is no code and no
/// other link: Telegram cannot nest those in a link.
fn inline(line: &str, in_link: bool) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    'outer: while i < chars.len() {
        let c = chars[i];
        // `code`
        if c == '`' && !in_link {
            if let Some(end) = find(&chars, i + 1, &['`']) {
                let code: String = chars[i + 1..end].iter().collect();
                out.push_str(&format!("<code>{}</code>", escape(&code)));
                i = end + 1;
                continue;
            }
        }
        // [text](url)
        if c == '[' && !in_link {
            if let Some(close) = find(&chars, i + 1, &[']']) {
                if chars.get(close + 1) == Some(&'(') {
                    if let Some(end) = find(&chars, close + 2, &[')']) {
                        let label: String = chars[i + 1..close].iter().collect();
                        let url: String = chars[close + 2..end].iter().collect();
                        if !label.trim().is_empty() && linkable(&url) {
                            out.push_str(&format!(
                                "<a href=\"{}\">{}</a>",
                                escape(&url),
                                inline(&label, true)
                            ));
                            i = end + 1;
                            continue;
                        }
                    }
                }
            }
        }
        // **bold**, __bold__, ~~strike~~
        for (marker, tag) in [("**", "b"), ("__", "b"), ("~~", "s")] {
            let m: Vec<char> = marker.chars().collect();
            if chars[i..].starts_with(&m) {
                if let Some(end) = find_seq(&chars, i + 2, &m) {
                    if end > i + 2 {
                        let inner: String = chars[i + 2..end].iter().collect();
                        out.push_str(&format!("<{tag}>{}</{tag}>", inline(&inner, in_link)));
                        i = end + 2;
                        continue 'outer;
                    }
                }
            }
        }
        // *italic* or _italic_ (an underscore only at word boundaries: snake_case stays)
        if (c == '*' || c == '_') && chars.get(i + 1).is_some_and(|n| !n.is_whitespace()) {
            let word_start = i == 0 || !chars[i - 1].is_alphanumeric();
            if c == '*' || word_start {
                if let Some(end) = find(&chars, i + 1, &[c]) {
                    let word_end = end + 1 >= chars.len() || !chars[end + 1].is_alphanumeric();
                    if end > i + 1 && !chars[end - 1].is_whitespace() && (c == '*' || word_end) {
                        let inner: String = chars[i + 1..end].iter().collect();
                        out.push_str(&format!("<i>{}</i>", inline(&inner, in_link)));
                        i = end + 1;
                        continue;
                    }
                }
            }
        }
        out.push_str(&escape(&c.to_string()));
        i += 1;
    }
    out
}

fn find(chars: &[char], from: usize, what: &[char]) -> Option<usize> {
    (from..chars.len()).find(|&j| what.contains(&chars[j]))
}

fn find_seq(chars: &[char], from: usize, seq: &[char]) -> Option<usize> {
    (from..chars.len().saturating_sub(seq.len() - 1)).find(|&j| chars[j..].starts_with(seq))
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert_eq!(to_html("```\nx < y"), "<pre>x &lt; y</pre>");
    }
}

#[cfg(test)]
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
