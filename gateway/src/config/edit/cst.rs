//! A lossless view of a JSON5 document for editing: every key, value, comma and bracket
//! with its byte span in the source. Trivia (whitespace, comments) is not stored: it stays
//! where it is in the text, and edits are byte ranges of that text, so everything an edit
//! does not touch is kept byte for byte.

use super::EditError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Open(u8),
    Close(u8),
    Colon,
    Comma,
    /// A quoted string; the byte is the quote character.
    Str(u8),
    /// Anything else: numbers, `true`, `null`, unquoted keys.
    Word,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

/// A value and its byte span `start..end` in the source.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    /// `start` is the `{`, `end - 1` the `}`.
    Object(Vec<Member>),
    /// `start` is the `[`, `end - 1` the `]`.
    Array(Vec<Element>),
    /// A quoted string, with its quote character.
    Str(u8),
    /// A number, `true`, `false`, `null`, `Infinity`, `NaN`.
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Member {
    /// The key, decoded.
    pub(super) key: String,
    pub(super) key_start: usize,
    pub(super) key_end: usize,
    /// The quote character of a quoted key; `None` for an unquoted one.
    pub(super) key_quote: Option<u8>,
    pub(super) value: Node,
    /// Where the comma after the value is, if there is one.
    pub(super) comma: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Element {
    pub(super) value: Node,
    pub(super) comma: Option<usize>,
}

/// One entry of a container, whichever kind: where it starts, its value, its comma.
pub(super) trait Entry {
    fn entry_start(&self) -> usize;
    fn entry_value(&self) -> &Node;
    fn entry_comma(&self) -> Option<usize>;
}

impl Entry for Member {
    fn entry_start(&self) -> usize {
        self.key_start
    }
    fn entry_value(&self) -> &Node {
        &self.value
    }
    fn entry_comma(&self) -> Option<usize> {
        self.comma
    }
}

impl Entry for Element {
    fn entry_start(&self) -> usize {
        self.value.start
    }
    fn entry_value(&self) -> &Node {
        &self.value
    }
    fn entry_comma(&self) -> Option<usize> {
        self.comma
    }
}

/// Parses `src` into its root value (`None` for a document of only whitespace and
/// comments). Call it on text the JSON5 parser accepted: it checks structure, not every
/// rule of the grammar.
pub(super) fn parse(src: &str) -> Result<Option<Node>, EditError> {
    let tokens = lex(src);
    let mut p = Parser { src, tokens, at: 0 };
    if p.tokens.is_empty() {
        return Ok(None);
    }
    let root = p.value(0)?;
    if let Some(t) = p.tokens.get(p.at) {
        return Err(p.error(t.start, "unexpected text after the root value"));
    }
    Ok(Some(root))
}

/// JSON5 whitespace (and the byte-order mark).
pub(super) fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{FEFF}'
}

/// The position after the trivia (whitespace, comments) that starts at `at`.
pub(super) fn skip_trivia(src: &str, mut at: usize) -> usize {
    let b = src.as_bytes();
    loop {
        let Some(c) = src[at..].chars().next() else {
            return at;
        };
        if is_space(c) {
            at += c.len_utf8();
        } else if b.get(at) == Some(&b'/') && b.get(at + 1) == Some(&b'/') {
            at = line_comment_end(src, at);
        } else if b.get(at) == Some(&b'/') && b.get(at + 1) == Some(&b'*') {
            at = match src[at + 2..].find("*/") {
                Some(i) => at + 2 + i + 2,
                None => src.len(),
            };
        } else {
            return at;
        }
    }
}

/// End of a `//` comment starting at `at`: the line terminator (not included).
pub(super) fn line_comment_end(src: &str, at: usize) -> usize {
    src[at..]
        .char_indices()
        .find(|(_, c)| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
        .map_or(src.len(), |(i, _)| at + i)
}

fn lex(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        at = skip_trivia(src, at);
        let Some(&c) = b.get(at) else { break };
        let start = at;
        let tok = match c {
            b'{' | b'[' => {
                at += 1;
                Tok::Open(c)
            }
            b'}' | b']' => {
                at += 1;
                Tok::Close(c)
            }
            b':' => {
                at += 1;
                Tok::Colon
            }
            b',' => {
                at += 1;
                Tok::Comma
            }
            b'"' | b'\'' => {
                at = string_end(src, at);
                Tok::Str(c)
            }
            _ => {
                at = word_end(src, at);
                if at == start {
                    // A character no token starts with (e.g. a lone `/`): skip it.
                    at += src[at..].chars().next().map_or(1, char::len_utf8);
                    continue;
                }
                Tok::Word
            }
        };
        out.push(Token {
            tok,
            start,
            end: at,
        });
    }
    out
}

/// End (after the closing quote) of the string whose opening quote is at `at`.
fn string_end(src: &str, at: usize) -> usize {
    let b = src.as_bytes();
    let quote = b[at];
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 1;
                // Skip the escaped character whole (it may be multi-byte).
                if let Some(c) = src.get(i..).and_then(|s| s.chars().next()) {
                    i += c.len_utf8();
                }
            }
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

fn word_end(src: &str, at: usize) -> usize {
    let b = src.as_bytes();
    let mut i = at;
    while let Some(c) = src[i..].chars().next() {
        if is_space(c)
            || "{}[]:,\"'".contains(c)
            || (c == '/' && matches!(b.get(i + 1), Some(b'/' | b'*')))
        {
            break;
        }
        i += c.len_utf8();
    }
    i
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    at: usize,
}

/// Deeper nesting than this is refused (the loader allows far less).
const MAX_DEPTH: usize = 256;

impl Parser<'_> {
    fn error(&self, at: usize, message: &str) -> EditError {
        let (line, column) = line_col(self.src, at);
        EditError::Syntax {
            line,
            column,
            message: message.to_string(),
        }
    }

    fn end_error(&self) -> EditError {
        self.error(self.src.len(), "unexpected end of the file")
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).copied();
        self.at += 1;
        t
    }

    fn peek(&self) -> Option<Token> {
        self.tokens.get(self.at).copied()
    }

    fn value(&mut self, depth: usize) -> Result<Node, EditError> {
        let t = self.next().ok_or_else(|| self.end_error())?;
        match t.tok {
            Tok::Open(_) if depth >= MAX_DEPTH => Err(self.error(t.start, "nested too deeply")),
            Tok::Open(b'{') => self.object(t.start, depth + 1),
            Tok::Open(_) => self.array(t.start, depth + 1),
            Tok::Str(q) => Ok(Node {
                start: t.start,
                end: t.end,
                kind: Kind::Str(q),
            }),
            Tok::Word => Ok(Node {
                start: t.start,
                end: t.end,
                kind: Kind::Other,
            }),
            _ => Err(self.error(t.start, "expected a value")),
        }
    }

    /// After a value: a comma (returned) or the closing bracket (left for the caller).
    fn comma_or_close(&mut self, close: u8) -> Result<Option<usize>, EditError> {
        match self.peek() {
            Some(Token {
                tok: Tok::Comma,
                start,
                ..
            }) => {
                self.at += 1;
                Ok(Some(start))
            }
            Some(Token {
                tok: Tok::Close(c), ..
            }) if c == close => Ok(None),
            Some(t) => Err(self.error(t.start, "expected a comma or a closing bracket")),
            None => Err(self.end_error()),
        }
    }

    fn object(&mut self, start: usize, depth: usize) -> Result<Node, EditError> {
        let mut members = Vec::new();
        loop {
            let t = self.next().ok_or_else(|| self.end_error())?;
            let (key, key_quote) = match t.tok {
                Tok::Close(b'}') => {
                    return Ok(Node {
                        start,
                        end: t.end,
                        kind: Kind::Object(members),
                    })
                }
                Tok::Str(q) => (decode_string(&self.src[t.start..t.end]), Some(q)),
                Tok::Word => (decode_word(&self.src[t.start..t.end]), None),
                _ => return Err(self.error(t.start, "expected a key")),
            };
            match self.next() {
                Some(Token {
                    tok: Tok::Colon, ..
                }) => {}
                Some(c) => return Err(self.error(c.start, "expected `:` after a key")),
                None => return Err(self.end_error()),
            }
            let value = self.value(depth)?;
            let comma = self.comma_or_close(b'}')?;
            members.push(Member {
                key,
                key_start: t.start,
                key_end: t.end,
                key_quote,
                value,
                comma,
            });
            if comma.is_none() {
                let close = self.next().ok_or_else(|| self.end_error())?;
                return Ok(Node {
                    start,
                    end: close.end,
                    kind: Kind::Object(members),
                });
            }
        }
    }

    fn array(&mut self, start: usize, depth: usize) -> Result<Node, EditError> {
        let mut elements = Vec::new();
        loop {
            if let Some(Token {
                tok: Tok::Close(b']'),
                end,
                ..
            }) = self.peek()
            {
                self.at += 1;
                return Ok(Node {
                    start,
                    end,
                    kind: Kind::Array(elements),
                });
            }
            let value = self.value(depth)?;
            let comma = self.comma_or_close(b']')?;
            elements.push(Element { value, comma });
            if comma.is_none() {
                let close = self.next().ok_or_else(|| self.end_error())?;
                return Ok(Node {
                    start,
                    end: close.end,
                    kind: Kind::Array(elements),
                });
            }
        }
    }
}

/// One-based line and column (in characters) of byte `at`.
pub(super) fn line_col(src: &str, at: usize) -> (usize, usize) {
    let before = &src[..at.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn hex(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, digits: usize) -> Option<u32> {
    let mut v = 0;
    for _ in 0..digits {
        v = v * 16 + chars.peek()?.to_digit(16)?;
        chars.next();
    }
    Some(v)
}

/// A `\u` escape (after the `u`), joining a surrogate pair written as two escapes.
fn unicode_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    let hi = hex(chars, 4)?;
    if (0xD800..0xDC00).contains(&hi) {
        let mut ahead = chars.clone();
        if ahead.next() == Some('\\') && ahead.next() == Some('u') {
            chars.next();
            chars.next();
            let lo = hex(chars, 4)?;
            return char::from_u32(
                0x10000 + ((hi - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF),
            );
        }
    }
    char::from_u32(hi)
}

/// The text of a quoted string token (quotes included), with its escapes decoded.
pub(super) fn decode_string(token: &str) -> String {
    let inner = token.get(1..token.len().saturating_sub(1)).unwrap_or("");
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('0') => out.push('\0'),
            Some('x') => out.extend(hex(&mut chars, 2).and_then(char::from_u32)),
            Some('u') => out.extend(unicode_escape(&mut chars)),
            Some('\r') => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            Some('\n' | '\u{2028}' | '\u{2029}') | None => {}
            Some(other) => out.push(other),
        }
    }
    out
}

/// An unquoted key, with its `\uXXXX` escapes decoded.
fn decode_word(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'u') {
            chars.next();
            out.extend(unicode_escape(&mut chars));
        } else {
            out.push(c);
        }
    }
    out
}
