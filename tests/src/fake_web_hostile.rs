//! The hostile pages of the fake web site: each nesting 100,000 levels deep (`/deep/div`,
//! `span`, `table`, `ul`, `blockquote`, `pre`, an unclosed `span`, a tag soup), a gzip
//! bomb (`/gzip-bomb`: 30 MB of zeros in about 200 KB, sent as `Content-Encoding: gzip`)
//! and a body that never ends (`/endless`). Each page's deepest text is [`DEEPEST`].

use std::convert::Infallible;

use axum::body::Body;
use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// Levels of every deep page.
pub const DEPTH: usize = 100_000;
/// The text at the bottom of every deep page.
pub const DEEPEST: &str = "deepest word";
/// The kinds of `/deep/{kind}`.
pub const KINDS: &[&str] = &[
    "div",
    "span",
    "table",
    "ul",
    "blockquote",
    "pre",
    "unclosed",
    "soup",
];

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// `/deep/{kind}`: the page of that kind.
pub async fn deep(Path(kind): Path<String>) -> Response {
    let (open, close) = match kind.as_str() {
        "div" => ("<div>", "</div>"),
        "span" => ("<span>", "</span>"),
        "table" => ("<table><tr><td>", "</td></tr></table>"),
        "ul" => ("<ul><li>", "</li></ul>"),
        "blockquote" => ("<blockquote>", "</blockquote>"),
        "pre" => ("<pre>", "</pre>"),
        "unclosed" => ("<span>", ""),
        "soup" => ("<div><b id=x><i><p><table><td><ul><li><font>", ""),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let mut page = String::from("<html><body>");
    page.push_str(&open.repeat(DEPTH));
    page.push_str(DEEPEST);
    page.push_str(&close.repeat(DEPTH));
    html(page)
}

/// `/gzip-bomb`: a gzip stream of 30 MB of zeros, sent compressed as an HTML page.
pub async fn gzip_bomb() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html"),
            (header::CONTENT_ENCODING, "gzip"),
        ],
        gzip_zeros(30 * 1024 * 1024),
    )
        .into_response()
}

/// `/endless`: an HTML body of `<div>`s that never ends.
pub async fn endless() -> Response {
    let chunk = Bytes::from("<div>".repeat(16 * 1024));
    let stream = futures::stream::repeat_with(move || Ok::<_, Infallible>(chunk.clone()));
    (
        [(header::CONTENT_TYPE, "text/html")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// A gzip member holding `len` zero bytes: one fixed-Huffman deflate block of a literal
/// zero and back-references of 258 bytes at distance 1.
pub fn gzip_zeros(len: usize) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut bits = Bits::default();
    bits.lsb_first(1, 1); // the last block
    bits.lsb_first(1, 2); // fixed Huffman codes
    let mut left = len;
    if left > 0 {
        bits.code(0x30, 8); // literal 0
        left -= 1;
    }
    while left > 0 {
        // Lengths under 258 would need other codes; the rest is written as literals.
        if left >= 258 {
            bits.code(0xc5, 8); // length 258 (symbol 285)
            bits.code(0, 5); // distance 1
            left -= 258;
        } else {
            bits.code(0x30, 8);
            left -= 1;
        }
    }
    bits.code(0, 7); // end of block
    out.extend(bits.finish());
    out.extend(crc32_zeros(len).to_le_bytes());
    out.extend((len as u32).to_le_bytes());
    out
}

/// The CRC-32 of `len` zero bytes.
fn crc32_zeros(len: usize) -> u32 {
    let table: Vec<u32> = (0..256u32)
        .map(|n| {
            (0..8).fold(n, |c, _| {
                if c & 1 == 1 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                }
            })
        })
        .collect();
    let crc = (0..len).fold(!0u32, |c, _| table[(c & 0xff) as usize] ^ (c >> 8));
    !crc
}

/// A deflate bit stream.
#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl Bits {
    /// `count` bits of `v`, least significant first (block headers, extra bits).
    fn lsb_first(&mut self, v: u32, count: u32) {
        for i in 0..count {
            self.push((v >> i) & 1);
        }
    }

    /// A Huffman code of `count` bits, most significant first.
    fn code(&mut self, v: u32, count: u32) {
        for i in (0..count).rev() {
            self.push((v >> i) & 1);
        }
    }

    fn push(&mut self, bit: u32) {
        self.acc |= bit << self.n;
        self.n += 1;
        if self.n == 8 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.n = 0;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}
