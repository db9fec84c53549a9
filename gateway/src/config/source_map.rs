//! A small JSON5-aware scanner that maps key paths (`agents.list[1].id`) to the line and
//! column of that key (or array element) in the source text, so errors found on the parsed
//! value can point back into the file.
//!
//! It understands comments (`//`, `/* */`), single- and double-quoted strings with escapes,
//! unquoted keys, and nested objects/arrays. It never fails: on text that is not valid JSON5
//! it maps what it can. A key written twice maps to its last occurrence, as the parser keeps
//! the last value.

use super::error::Seg;

/// A one-based line and column (counted in characters). Ordered by place in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Pos {
    pub(crate) line: usize,
    pub(crate) col: usize,
}

#[derive(Debug)]
enum Node {
    Object(Vec<(String, Pos, Node)>),
    Array(Vec<(Pos, Node)>),
    Scalar,
}

/// The structure of a JSON5 document with the position of every key and element.
#[derive(Debug)]
pub(crate) struct SourceMap {
    root: Option<(Pos, Node)>,
    /// `first_at_depth[d]`: the bracket that first opens a `d + 1`-th level of nesting
    /// (counting every `{`/`[` not yet closed, whatever the syntax around it), up to
    /// [`MAX_DEPTH`] levels.
    first_at_depth: Vec<Pos>,
}

impl SourceMap {
    pub(crate) fn new(src: &str) -> Self {
        let tokens = lex(src);
        let first_at_depth = nesting(&tokens);
        let mut p = Parser { tokens, at: 0 };
        let root = p.peek_pos().map(|pos| (pos, p.value(0)));
        SourceMap {
            root,
            first_at_depth,
        }
    }

    /// The first bracket that nests deeper than `limit` levels (the root object is level
    /// 1), if any. Counted on the tokens, so it holds for text that is not valid JSON5 too.
    pub(crate) fn deeper_than(&self, limit: usize) -> Option<Pos> {
        self.first_at_depth.get(limit).copied()
    }

    /// The key path of the innermost key or element that starts at or before `pos` and
    /// encloses it (the path of `pos` itself when a key or element starts there).
    pub(crate) fn path_to(&self, pos: Pos) -> Vec<Seg> {
        let mut path = Vec::new();
        let Some((_, root)) = self.root.as_ref() else {
            return path;
        };
        let mut node: &Node = root;
        loop {
            let next = match node {
                Node::Object(entries) => entries
                    .iter()
                    .rev()
                    .find(|(_, p, _)| *p <= pos)
                    .map(|(k, _, n)| (Seg::Key(k.clone()), n)),
                Node::Array(elems) => elems
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(_, (p, _))| *p <= pos)
                    .map(|(i, (_, n))| (Seg::Index(i), n)),
                Node::Scalar => None,
            };
            match next {
                Some((seg, n)) => {
                    path.push(seg);
                    node = n;
                }
                None => return path,
            }
        }
    }

    /// True when the text holds nothing but whitespace and comments.
    pub(crate) fn is_blank(&self) -> bool {
        self.root.is_none()
    }

    /// Position of exactly this key path, if it exists in the source.
    pub(crate) fn locate(&self, path: &[Seg]) -> Option<Pos> {
        let (mut pos, mut node) = self.root.as_ref().map(|(p, n)| (*p, n))?;
        for seg in path {
            (pos, node) = match (node, seg) {
                (Node::Object(entries), Seg::Key(k)) => entries
                    .iter()
                    .rev()
                    .find(|(key, _, _)| key == k)
                    .map(|(_, p, n)| (*p, n))?,
                (Node::Array(elems), Seg::Index(i)) => elems.get(*i).map(|(p, n)| (*p, n))?,
                _ => return None,
            };
        }
        Some(pos)
    }

    /// Position of the longest prefix of `path` that exists (the key itself when it does;
    /// its parent object for a missing key). `None` only for a blank document.
    pub(crate) fn locate_nearest(&self, path: &[Seg]) -> Option<Pos> {
        (0..=path.len()).rev().find_map(|n| self.locate(&path[..n]))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open(char),
    Close(char),
    Colon,
    Comma,
    Str(String),
    Word(String),
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    line: usize,
    col: usize,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn skip_trivia(&mut self) {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_whitespace() || c == '\u{FEFF}' => {
                    self.bump();
                }
                (Some('/'), Some('/')) => {
                    // JSON5 line terminators: a comment ending at any of them matters to
                    // the nesting count (`deeper_than`), not just to positions.
                    while self
                        .peek(0)
                        .is_some_and(|c| !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
                    {
                        self.bump();
                    }
                }
                (Some('/'), Some('*')) => {
                    self.bump();
                    self.bump();
                    while self.peek(0).is_some()
                        && !(self.peek(0) == Some('*') && self.peek(1) == Some('/'))
                    {
                        self.bump();
                    }
                    self.bump();
                    self.bump();
                }
                _ => return,
            }
        }
    }

    fn hex(&mut self, digits: usize) -> Option<u32> {
        let mut v = 0;
        for _ in 0..digits {
            v = v * 16 + self.peek(0)?.to_digit(16)?;
            self.bump();
        }
        Some(v)
    }

    /// `\u` escape (the backslash and `u` already consumed), joining surrogate pairs.
    fn unicode_escape(&mut self) -> Option<char> {
        let hi = self.hex(4)?;
        if (0xD800..0xDC00).contains(&hi) && self.peek(0) == Some('\\') && self.peek(1) == Some('u')
        {
            self.bump();
            self.bump();
            let lo = self.hex(4)?;
            return char::from_u32(
                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF),
            );
        }
        char::from_u32(hi)
    }

    fn string(&mut self, quote: char) -> String {
        let mut out = String::new();
        self.bump();
        while let Some(c) = self.bump() {
            match c {
                c if c == quote => break,
                '\\' => match self.bump() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some('b') => out.push('\u{8}'),
                    Some('f') => out.push('\u{c}'),
                    Some('v') => out.push('\u{b}'),
                    Some('0') => out.push('\0'),
                    Some('x') => out.extend(self.hex(2).and_then(char::from_u32)),
                    Some('u') => out.extend(self.unicode_escape()),
                    Some('\r') => {
                        if self.peek(0) == Some('\n') {
                            self.bump();
                        }
                    }
                    Some('\n' | '\u{2028}' | '\u{2029}') | None => {}
                    Some(other) => out.push(other),
                },
                c => out.push(c),
            }
        }
        out
    }

    fn word(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace()
                || "{}[]:,\"'".contains(c)
                || (c == '/' && matches!(self.peek(1), Some('/' | '*')))
            {
                break;
            }
            self.bump();
            if c == '\\' && self.peek(0) == Some('u') {
                self.bump();
                out.extend(self.unicode_escape());
            } else {
                out.push(c);
            }
        }
        out
    }
}

fn lex(src: &str) -> Vec<(Pos, Tok)> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        at: 0,
        line: 1,
        col: 1,
    };
    let mut out = Vec::new();
    loop {
        lx.skip_trivia();
        let pos = Pos {
            line: lx.line,
            col: lx.col,
        };
        let Some(c) = lx.peek(0) else { break };
        let tok = match c {
            '{' | '[' => {
                lx.bump();
                Tok::Open(c)
            }
            '}' | ']' => {
                lx.bump();
                Tok::Close(c)
            }
            ':' => {
                lx.bump();
                Tok::Colon
            }
            ',' => {
                lx.bump();
                Tok::Comma
            }
            '"' | '\'' => Tok::Str(lx.string(c)),
            _ => {
                let w = lx.word();
                if w.is_empty() {
                    // A lone character no token starts with (e.g. a stray `/`): skip it.
                    lx.bump();
                    continue;
                }
                Tok::Word(w)
            }
        };
        out.push((pos, tok));
    }
    out
}

/// Deeper nesting than this is mapped as an opaque value.
const MAX_DEPTH: usize = 128;

/// Where each level of nesting is first reached (see [`SourceMap::deeper_than`]).
fn nesting(tokens: &[(Pos, Tok)]) -> Vec<Pos> {
    let mut first = Vec::new();
    let mut depth = 0usize;
    for (pos, tok) in tokens {
        match tok {
            Tok::Open(_) => {
                depth += 1;
                if depth > first.len() && first.len() < MAX_DEPTH {
                    first.push(*pos);
                }
            }
            Tok::Close(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    first
}

struct Parser {
    tokens: Vec<(Pos, Tok)>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|(_, t)| t)
    }

    fn peek_pos(&self) -> Option<Pos> {
        self.tokens.get(self.at).map(|(p, _)| *p)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.at).map(|(_, t)| t.clone());
        self.at += 1;
        t
    }

    fn value(&mut self, depth: usize) -> Node {
        match self.next() {
            Some(Tok::Open('{')) if depth < MAX_DEPTH => self.object(depth + 1),
            Some(Tok::Open(_)) if depth < MAX_DEPTH => self.array(depth + 1),
            Some(Tok::Open(_)) => {
                self.skip_nested();
                Node::Scalar
            }
            _ => Node::Scalar,
        }
    }

    /// Skips to the bracket closing one already consumed.
    fn skip_nested(&mut self) {
        let mut depth = 1usize;
        while let Some(t) = self.next() {
            match t {
                Tok::Open(_) => depth += 1,
                Tok::Close(_) => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    fn object(&mut self, depth: usize) -> Node {
        let mut entries = Vec::new();
        while let Some(pos) = self.peek_pos() {
            match self.next() {
                Some(Tok::Close(_)) | None => break,
                Some(Tok::Comma) => {}
                Some(Tok::Str(key) | Tok::Word(key)) => {
                    if self.peek() == Some(&Tok::Colon) {
                        self.next();
                    }
                    let value = match self.peek() {
                        Some(Tok::Comma | Tok::Close(_)) | None => Node::Scalar,
                        _ => self.value(depth),
                    };
                    entries.push((key, pos, value));
                }
                Some(Tok::Open(_)) => self.skip_nested(),
                Some(Tok::Colon) => {}
            }
        }
        Node::Object(entries)
    }

    fn array(&mut self, depth: usize) -> Node {
        let mut elems = Vec::new();
        while let Some(pos) = self.peek_pos() {
            match self.peek() {
                Some(Tok::Close(_)) | None => {
                    self.next();
                    break;
                }
                Some(Tok::Comma | Tok::Colon) => {
                    self.next();
                }
                _ => {
                    let value = self.value(depth);
                    elems.push((pos, value));
                }
            }
        }
        Node::Array(elems)
    }
}

#[cfg(test)]
#[path = "source_map_tests.rs"]
mod tests;
