//! Markdown model output → Slack mrkdwn, on pulldown-cmark's CommonMark parser (the
//! Telegram formatter's method): fenced code blocks, inline code, bold (`*b*`), italic
//! (`_i_`), `~~strikethrough~~` (`~s~`), `[links](https://…)` (`<url|label>`) and `#`–`###`
//! headings (bold) are converted; everything else — list and quote markers (which Slack
//! shows as they are), raw HTML, unbalanced markers, blank lines — is the source text with
//! `&`, `<` and `>` escaped, so nothing the model writes becomes a mention or a link
//! Slack would resolve (`<!channel>`, `<@U…>`).

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

/// Escape text for Slack: `&`, `<`, `>` (the three control characters of mrkdwn).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// A link's label: escaped, without the `|` that would end the URL part early.
fn label(s: &str) -> String {
    escape(s).replace('|', "/")
}

/// Convert one message's text.
pub fn to_mrkdwn(text: &str) -> String {
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

/// Whether `url` may be a link's target: an http(s) or mailto URL, with no whitespace,
/// control characters, `|`, `<` or `>` (which would end Slack's `<url|label>` early).
fn linkable(url: &str) -> bool {
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| url.len() > scheme.len() && url.starts_with(scheme))
        && !url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '|' | '<' | '>'))
}

/// What a `Start` event opened, for its `End`.
enum Open {
    /// An inline mark (`*`, `_`, `~`): its closing marker is dropped.
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
    /// Inside a link's label: no code and no link there (Slack cannot nest them).
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
            let text = &self.src[self.pos..end];
            let text = if self.in_link {
                label(text)
            } else {
                escape(text)
            };
            self.out.push_str(&text);
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
                self.out.push('`');
                self.out.push_str(&escape(&code.replace('`', "'")));
                self.out.push('`');
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
            Tag::Strong => self.open_tag(at, "*", Open::Inline("*")),
            Tag::Emphasis => self.open_tag(at, "_", Open::Inline("_")),
            Tag::Strikethrough if marker.starts_with("~~") => {
                self.open_tag(at, "~", Open::Inline("~"))
            }
            Tag::Heading { level, .. }
                if marker.starts_with('#')
                    && matches!(
                        level,
                        HeadingLevel::H1 | HeadingLevel::H2 | HeadingLevel::H3
                    ) =>
            {
                self.open_tag(at, "*", Open::Heading)
            }
            Tag::Link {
                link_type: LinkType::Inline,
                dest_url,
                ..
            } if !self.in_link && linkable(dest_url) && has_label(rest) => {
                self.open_tag(at, &format!("<{}|", escape(dest_url)), Open::Link);
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
                self.out.push_str(tag);
                self.pos = self.pos.max(range.end);
            }
            Some(Open::Heading) => {
                self.skip_marker = false;
                self.out.push('*');
            }
            Some(Open::Link) => {
                self.skip_marker = false;
                self.in_link = false;
                self.out.push('>');
                self.pos = self.pos.max(range.end);
            }
            Some(Open::Fence(lang)) => {
                let body = self.code.take().unwrap_or_default();
                let body = escape(body.strip_suffix('\n').unwrap_or(&body));
                // Slack shows no language: the fence is plain.
                let _ = lang;
                self.out.push_str(&format!("```\n{body}\n```"));
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
#[path = "mrkdwn_tests.rs"]
mod tests;
