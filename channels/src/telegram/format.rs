//! Markdown model output → Telegram HTML, on pulldown-cmark's CommonMark parser: fenced
//! code blocks, inline code, bold, italic, `~~strikethrough~~`, `[links](https://…)` and
//! `#`–`###` headings become tags; everything else — list and quote markers, indented
//! code, raw HTML, unbalanced markers, blank lines — is the source text, escaped, so the
//! output is always valid for Telegram's HTML parser and keeps the message's layout.
//!
//! The parser finds the constructs; the output is written from the source by byte range
//! (`into_offset_iter`): a construct's markers are dropped and its tags written, and every
//! other byte is copied as it was (escaped), whatever CommonMark would make of it.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

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
    let events: Vec<(Event<'_>, Range<usize>)> =
        Parser::new_ext(text, Options::ENABLE_STRIKETHROUGH)
            .into_offset_iter()
            .collect();
    let mut r = Renderer {
        src: text,
        out: String::with_capacity(text.len() + 32),
        pos: 0,
        skip_marker: false,
        open: Vec::new(),
        in_link: false,
        code: None,
    };
    for (i, (event, range)) in events.iter().enumerate() {
        r.event(event, range.clone(), &events[i + 1..]);
    }
    r.copy_to(text.len());
    r.out
}

/// Whether `url` may be a link's `href`: an http(s) or tg URL, with no whitespace or control
/// characters (Telegram refuses a link it cannot parse as a URL).
fn linkable(url: &str) -> bool {
    ["http://", "https://", "tg://"]
        .iter()
        .any(|scheme| url.len() > scheme.len() && url.starts_with(scheme))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// What a `Start` event opened, for its `End`.
enum Open {
    /// An inline tag (`b`, `i`, `s`): its closing marker is dropped.
    Inline(&'static str),
    /// A heading, written as bold: what follows its text is copied.
    Heading,
    /// A link: `](url)` is dropped.
    Link,
    /// A fenced code block with its language, if it has a plain one.
    Fence(Option<String>),
    /// Not converted: its markers are copied as text.
    Source,
}

struct Renderer<'a> {
    src: &'a str,
    out: String,
    /// Bytes of `src` done with: written, or dropped as a construct's markers.
    pos: usize,
    /// The source up to the next event is a construct's opening marker: dropped.
    skip_marker: bool,
    open: Vec<Open>,
    /// Inside a link's label: no code and no link there (Telegram cannot nest them).
    in_link: bool,
    /// The body of the fenced code block being read.
    code: Option<String>,
}

impl Renderer<'_> {
    /// Write the source up to `end` as text, escaped (or drop it: an opening marker).
    fn copy_to(&mut self, end: usize) {
        let end = end.min(self.src.len());
        if end <= self.pos {
            return;
        }
        if !std::mem::take(&mut self.skip_marker) {
            self.out.push_str(&escape(&self.src[self.pos..end]));
        }
        self.pos = end;
    }

    /// Open `tag`: the source before it is text, its opening marker is dropped.
    fn open_tag(&mut self, at: usize, html: &str, open: Open) {
        self.copy_to(at);
        self.out.push_str(html);
        self.skip_marker = true;
        self.open.push(open);
    }

    fn event(
        &mut self,
        event: &Event<'_>,
        range: Range<usize>,
        rest: &[(Event<'_>, Range<usize>)],
    ) {
        match event {
            Event::Start(tag) => self.start(tag, range, rest),
            Event::End(end) => self.end(*end, range),
            Event::Text(text) if self.code.is_some() => {
                if let Some(body) = &mut self.code {
                    body.push_str(text);
                }
                self.skip_marker = false;
                self.pos = self.pos.max(range.end);
            }
            Event::Code(code) if !self.in_link => {
                self.copy_to(range.start);
                self.out.push_str("<code>");
                self.out.push_str(&escape(code));
                self.out.push_str("</code>");
                self.pos = self.pos.max(range.end);
            }
            // Text, breaks, raw HTML, rules, code in a link's label: the source as text.
            _ => {
                self.copy_to(range.start);
                self.copy_to(range.end);
            }
        }
    }

    fn start(&mut self, tag: &Tag<'_>, range: Range<usize>, rest: &[(Event<'_>, Range<usize>)]) {
        let at = range.start;
        let marker = self.src.get(at..).unwrap_or("").trim_start();
        match tag {
            Tag::Strong => self.open_tag(at, "<b>", Open::Inline("b")),
            Tag::Emphasis => self.open_tag(at, "<i>", Open::Inline("i")),
            Tag::Strikethrough if marker.starts_with("~~") => {
                self.open_tag(at, "<s>", Open::Inline("s"))
            }
            Tag::Heading { level, .. }
                if marker.starts_with('#')
                    && matches!(
                        level,
                        HeadingLevel::H1 | HeadingLevel::H2 | HeadingLevel::H3
                    ) =>
            {
                self.open_tag(at, "<b>", Open::Heading)
            }
            Tag::Link {
                link_type: LinkType::Inline,
                dest_url,
                ..
            } if !self.in_link && linkable(dest_url) && has_label(rest) => {
                self.open_tag(
                    at,
                    &format!("<a href=\"{}\">", escape(dest_url)),
                    Open::Link,
                );
                self.in_link = true;
            }
            Tag::CodeBlock(CodeBlockKind::Fenced(info)) if marker.starts_with("```") => {
                self.copy_to(at);
                let lang = info.trim();
                let plain = !lang.is_empty()
                    && lang
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '_');
                self.open.push(Open::Fence(plain.then(|| lang.to_string())));
                self.code = Some(String::new());
            }
            _ => self.open.push(Open::Source),
        }
    }

    fn end(&mut self, _end: TagEnd, range: Range<usize>) {
        match self.open.pop() {
            Some(Open::Inline(tag)) => {
                self.skip_marker = false;
                self.out.push_str(&format!("</{tag}>"));
                self.pos = self.pos.max(range.end);
            }
            Some(Open::Heading) => {
                self.skip_marker = false;
                self.out.push_str("</b>");
            }
            Some(Open::Link) => {
                self.skip_marker = false;
                self.in_link = false;
                self.out.push_str("</a>");
                self.pos = self.pos.max(range.end);
            }
            Some(Open::Fence(lang)) => {
                let body = self.code.take().unwrap_or_default();
                let body = escape(body.strip_suffix('\n').unwrap_or(&body));
                match lang {
                    Some(lang) => self.out.push_str(&format!(
                        "<pre><code class=\"language-{lang}\">{body}</code></pre>"
                    )),
                    None => self.out.push_str(&format!("<pre>{body}</pre>")),
                }
                // The closing fence is dropped; the line break after it is text.
                let block = self.src.get(range.clone()).unwrap_or("");
                let trailing = block.len() - block.trim_end_matches(['\n', '\r']).len();
                self.skip_marker = false;
                self.pos = self.pos.max(range.end - trailing.min(range.len()));
            }
            Some(Open::Source) | None => {}
        }
    }
}

/// Whether a link whose `Start` came right before `rest` has a label that is not blank.
fn has_label(rest: &[(Event<'_>, Range<usize>)]) -> bool {
    for (event, _) in rest {
        match event {
            Event::End(TagEnd::Link) => return false,
            Event::Text(t) | Event::Code(t) if t.trim().is_empty() => {}
            Event::SoftBreak | Event::HardBreak => {}
            _ => return true,
        }
    }
    false
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
