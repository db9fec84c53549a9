//! HTML → Markdown for `web_fetch`, bounded so that no page can end the daemon: the tags
//! are pre-scanned and nesting past [`PRE_DEPTH`] levels is cut before the parser sees it
//! (the parser's scope checks cost as much as the nesting is deep), the parsed tree is then
//! cut at [`MAX_DEPTH`] levels (a deeper subtree becomes the plain text of its deepest kept
//! element, without recursion), and the conversion — htmd walks the tree recursively —
//! runs on a thread of its own with a [`STACK`]-byte stack, joined asynchronously.

use std::collections::HashMap;
use std::rc::Rc;

use html5ever::tendril::StrTendril;
use markup5ever_rcdom::{Node, NodeData};

/// Deepest element kept in the parsed tree; what is below becomes plain text. Real pages
/// nest a few dozen levels; htmd's walk needs well under 20 KB of stack per level.
pub const MAX_DEPTH: usize = 128;
/// Deepest nesting of start tags the parser is given (above [`MAX_DEPTH`]: implied end
/// tags, which the pre-scan does not model, make its count higher than the tree's depth).
pub const PRE_DEPTH: usize = 512;
/// Formatting elements (`b`, `i`, `a`…) left open at once, counted with those closed
/// implicitly: the parser reopens each of them in front of later content, so many of them
/// nest the tree without any nesting of the tags.
const MAX_FORMATTING: usize = 32;
/// Stack of the conversion thread.
pub const STACK: usize = 64 * 1024 * 1024;

/// Elements without content: never nested.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen", "frame", "basefont", "bgsound", "image",
];
/// Elements whose content is raw text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];
/// Elements the parser reopens after an implied close (the "active formatting elements").
const FORMATTING: &[&str] = &[
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];

/// The conversion failed to run (its thread could not start or died).
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error("cannot start the HTML conversion: {0}")]
    Spawn(std::io::Error),
    #[error("the HTML conversion failed")]
    Died,
}

/// `html` as Markdown, converted on a thread of its own; `skip` lists elements whose
/// content is left out.
pub async fn to_markdown(html: String, skip: &'static [&'static str]) -> Result<String, HtmlError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    // The thread ends on its own: the work is bounded by the body limit and the depth caps.
    std::thread::Builder::new()
        .name("web-fetch-html".into())
        .stack_size(STACK)
        .spawn(move || {
            let _ = tx.send(convert(&html, skip));
        })
        .map_err(HtmlError::Spawn)?;
    rx.await.map_err(|_| HtmlError::Died)
}

/// `html` as Markdown, on the calling thread (whose stack must hold [`MAX_DEPTH`] levels
/// of htmd's walk).
pub fn convert(html: &str, skip: &[&str]) -> String {
    let conv = htmd::HtmlToMarkdown::builder()
        .skip_tags(skip.to_vec())
        .build();
    let cut = cut_tags(html);
    let tree = match conv.html_to_tree(&cut) {
        Ok(t) => t,
        // html5ever's parse cannot fail on a string; htmd's signature keeps an io::Result.
        Err(_) => return String::new(),
    };
    cut_tree(&tree, MAX_DEPTH, skip);
    conv.tree_to_markdown(&tree)
}

/// How deep the tree under `node` goes (the node itself is level 0), without recursion.
pub fn depth(node: &Rc<Node>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(node.clone(), 0usize)];
    while let Some((n, d)) = stack.pop() {
        deepest = deepest.max(d);
        for c in n.children.borrow().iter() {
            stack.push((c.clone(), d + 1));
        }
    }
    deepest
}

/// Replace the content of every element `max` levels below `root` by the plain text of
/// that content (elements listed in `skip` left out), so the tree is at most `max + 1`
/// levels deep.
pub fn cut_tree(root: &Rc<Node>, max: usize, skip: &[&str]) {
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((n, d)) = stack.pop() {
        if d < max {
            for c in n.children.borrow().iter() {
                stack.push((c.clone(), d + 1));
            }
            continue;
        }
        let has_elements = n
            .children
            .borrow()
            .iter()
            .any(|c| matches!(c.data, NodeData::Element { .. }));
        if !has_elements {
            continue;
        }
        let text = text_of(&n, skip);
        let children = std::mem::take(&mut *n.children.borrow_mut());
        // Dropping the old subtree is iterative (markup5ever_rcdom's `Drop for Node`).
        drop(children);
        if !text.is_empty() {
            let t = Node::new(NodeData::Text {
                contents: std::cell::RefCell::new(StrTendril::from(text)),
            });
            t.parent.set(Some(Rc::downgrade(&n)));
            n.children.borrow_mut().push(t);
        }
    }
}

/// The text under `node` in document order, a space between pieces that would otherwise
/// touch; without recursion.
fn text_of(node: &Rc<Node>, skip: &[&str]) -> String {
    let mut out = String::new();
    let mut stack: Vec<Rc<Node>> = node.children.borrow().iter().rev().cloned().collect();
    while let Some(n) = stack.pop() {
        match &n.data {
            NodeData::Text { contents } => {
                let piece = contents.borrow();
                let touching = !out.is_empty()
                    && !out.ends_with(char::is_whitespace)
                    && !piece.starts_with(char::is_whitespace);
                if touching {
                    out.push(' ');
                }
                out.push_str(&piece);
            }
            NodeData::Element { name, .. } if skip.contains(&&*name.local) => {}
            NodeData::Element { .. } => {
                stack.extend(n.children.borrow().iter().rev().cloned());
            }
            _ => {}
        }
    }
    out
}

/// `html` with the start tags nested past [`PRE_DEPTH`] (and their end tags) left out, and
/// formatting start tags past [`MAX_FORMATTING`] open at once. One pass, no recursion; a
/// tag's text stays. Approximate (it knows neither implied end tags nor attribute values
/// holding `>`): the tree cut after parsing is the bound that holds.
pub fn cut_tags(html: &str) -> String {
    let b = html.as_bytes();
    let mut out = String::with_capacity(html.len());
    let mut open = Open::default();
    let mut dropped: HashMap<String, usize> = HashMap::new();
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let at = i + off;
        let rest = &b[at + 1..];
        if rest.starts_with(b"!--") {
            i = html[at + 4..]
                .find("-->")
                .map_or(html.len(), |e| at + 4 + e + 3);
            continue;
        }
        let (closing, name_at) = if rest.first() == Some(&b'/') {
            (true, at + 2)
        } else {
            (false, at + 1)
        };
        if !b.get(name_at).is_some_and(u8::is_ascii_alphabetic) {
            i = at + 1;
            continue;
        }
        let name_end = html[name_at..]
            .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
            .map_or(html.len(), |e| name_at + e);
        let name = html[name_at..name_end].to_ascii_lowercase();
        let end = html[name_end..]
            .find('>')
            .map_or(html.len(), |e| name_end + e + 1);
        let keep = if closing {
            open.close(&name, &mut dropped)
        } else if VOID.contains(&name.as_str()) {
            true
        } else if open.admits(&name) {
            open.push(name.clone());
            true
        } else {
            *dropped.entry(name.clone()).or_default() += 1;
            false
        };
        if !keep {
            out.push_str(&html[copied..at]);
            copied = end;
        }
        i = end;
        // Raw text runs to its end tag: no tags inside.
        if keep && !closing && RAW_TEXT.contains(&name.as_str()) {
            i = find_end_tag(html, i, &name);
        }
    }
    out.push_str(&html[copied..]);
    out
}

/// The elements [`cut_tags`] takes as open, innermost last.
#[derive(Default)]
struct Open {
    names: Vec<String>,
    /// Formatting elements among `names`.
    formatting: usize,
    /// Formatting elements closed implicitly, which the parser may reopen.
    stray_formatting: usize,
}

impl Open {
    /// Whether a start tag `name` is kept.
    fn admits(&self, name: &str) -> bool {
        let formatting = FORMATTING.contains(&name);
        self.names.len() < PRE_DEPTH
            && !(formatting && self.formatting + self.stray_formatting >= MAX_FORMATTING)
    }

    fn push(&mut self, name: String) {
        if FORMATTING.contains(&name.as_str()) {
            self.formatting += 1;
        }
        self.names.push(name);
    }

    /// An end tag `name`: whether it is kept (not when its start tag was dropped).
    fn close(&mut self, name: &str, dropped: &mut HashMap<String, usize>) -> bool {
        if let Some(n) = dropped.get_mut(name).filter(|n| **n > 0) {
            *n -= 1;
            return false;
        }
        if let Some(pos) = self.names.iter().rposition(|n| n == name) {
            // The element closed, and (after it) those its end tag closes implicitly.
            for (k, closed) in self.names.drain(pos..).enumerate() {
                if FORMATTING.contains(&closed.as_str()) {
                    self.formatting -= 1;
                    if k > 0 {
                        self.stray_formatting += 1;
                    }
                }
            }
        } else if FORMATTING.contains(&name) {
            self.stray_formatting = self.stray_formatting.saturating_sub(1);
        }
        true
    }
}

/// Where the first `</name` (any case) at or after `from` starts, or the end of `html`.
fn find_end_tag(html: &str, from: usize, name: &str) -> usize {
    let mut i = from;
    while let Some(off) = html[i..].find("</") {
        let at = i + off;
        let tag = html.as_bytes().get(at + 2..at + 2 + name.len());
        if tag.is_some_and(|t| t.eq_ignore_ascii_case(name.as_bytes())) {
            return at;
        }
        i = at + 2;
    }
    html.len()
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
