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
            Some(h) => out.push_str(&format!("<b>{}</b>", inline(h))),
            None => out.push_str(&inline(line)),
        }
    }
    out
}

/// Inline markup of one line.
fn inline(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    'outer: while i < chars.len() {
        let c = chars[i];
        // `code`
        if c == '`' {
            if let Some(end) = find(&chars, i + 1, &['`']) {
                let code: String = chars[i + 1..end].iter().collect();
                out.push_str(&format!("<code>{}</code>", escape(&code)));
                i = end + 1;
                continue;
            }
        }
        // [text](url)
        if c == '[' {
            if let Some(close) = find(&chars, i + 1, &[']']) {
                if chars.get(close + 1) == Some(&'(') {
                    if let Some(end) = find(&chars, close + 2, &[')']) {
                        let label: String = chars[i + 1..close].iter().collect();
                        let url: String = chars[close + 2..end].iter().collect();
                        if url.starts_with("http://")
                            || url.starts_with("https://")
                            || url.starts_with("tg://")
                        {
                            out.push_str(&format!(
                                "<a href=\"{}\">{}</a>",
                                escape(&url),
                                inline(&label)
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
                        out.push_str(&format!("<{tag}>{}</{tag}>", inline(&inner)));
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
                        out.push_str(&format!("<i>{}</i>", inline(&inner)));
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

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert_eq!(to_html("```\nx < y"), "<pre>x &lt; y</pre>");
    }
}
