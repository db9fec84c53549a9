//! A small incremental Server-Sent Events parser: feed bytes, get `data:` payloads.
//!
//! Line-based, as the SSE spec reads a stream: each byte is looked at once (a chunk is
//! never rescanned), lines end with CRLF, LF or CR, a blank line ends an event, and how the
//! bytes are split into chunks makes no difference. An event may hold at most
//! [`MAX_EVENT_BYTES`]: a stream that never ends its event is refused instead of buffered.

/// Largest event accepted, in bytes (its lines, including `data:` prefixes). An OpenAI
/// chunk is a few hundred bytes; a server that sends a whole answer as one event stays far
/// below this.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;

/// The stream broke the parser's bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("an event of the answer stream is larger than {MAX_EVENT_BYTES} bytes (no blank line ends it)")]
    EventTooLarge,
}

/// Accumulates bytes and yields the data of each complete event.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The line being read (without its terminator).
    line: Vec<u8>,
    /// The `data` lines of the event being read, joined with `\n`.
    data: String,
    /// Whether the event being read has a `data` field (it may be empty).
    has_data: bool,
    /// Bytes of the event being read so far, for the size bound.
    event_bytes: usize,
    /// The last byte fed was a CR: a LF right after it belongs to the same line end.
    after_cr: bool,
}

impl SseParser {
    /// Feed a chunk; returns the `data` payloads of the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<String>, SseError> {
        let mut out = Vec::new();
        let mut rest = chunk;
        // An empty chunk says nothing about the byte after the CR: keep waiting for it.
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(after) = rest.strip_prefix(b"\n") {
                rest = after;
            }
        }
        while !rest.is_empty() {
            match rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
                None => {
                    self.grow(rest.len())?;
                    self.line.extend_from_slice(rest);
                    break;
                }
                Some(end) => {
                    self.grow(end + 1)?;
                    self.line.extend_from_slice(&rest[..end]);
                    let cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    if cr {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    self.end_line(&mut out);
                }
            }
        }
        Ok(out)
    }

    /// Whatever is left once the stream ended: an event without the closing blank line
    /// is still delivered (some servers end the stream right after the last event).
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.end_line(&mut out);
        out
    }

    fn grow(&mut self, n: usize) -> Result<(), SseError> {
        self.event_bytes = self.event_bytes.saturating_add(n);
        if self.event_bytes > MAX_EVENT_BYTES {
            return Err(SseError::EventTooLarge);
        }
        Ok(())
    }

    /// The current line is complete: a blank one dispatches the event.
    fn end_line(&mut self, out: &mut Vec<String>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data {
                out.push(std::mem::take(&mut self.data));
            }
            self.has_data = false;
            self.data.clear();
            self.event_bytes = 0;
            return;
        }
        if line.starts_with(b":") {
            return; // a comment (keep-alive)
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.has_data = true;
            self.data.push_str(&String::from_utf8_lossy(value));
        }
        // `event`, `id`, `retry` and unknown fields: nothing the model APIs need.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(p: &mut SseParser, chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed(c).expect("within bounds"));
        }
        out.extend(p.finish());
        out
    }

    #[test]
    fn parses_events_across_chunk_boundaries() {
        let mut p = SseParser::default();
        assert!(p.feed(b"data: {\"a\"").expect("ok").is_empty());
        assert_eq!(
            p.feed(b":1}\n\ndata: [DONE]\n\n").expect("ok"),
            vec!["{\"a\":1}", "[DONE]"]
        );
    }

    #[test]
    fn ignores_comments_and_handles_crlf_and_cr() {
        let mut p = SseParser::default();
        assert_eq!(
            p.feed(b": keep-alive\r\n\r\ndata: x\r\n\r\n").expect("ok"),
            vec!["x"]
        );
        assert_eq!(
            all(
                &mut p,
                &[b"data: a\r", b"\ndata: b\r", b"\r", b"event: e\ndata:c\n\n"]
            ),
            vec!["a\nb", "c"]
        );
    }

    #[test]
    fn an_unterminated_last_event_is_delivered_at_the_end() {
        let mut p = SseParser::default();
        assert_eq!(
            all(&mut p, &[b"data: one\n\ndata: two"]),
            vec!["one", "two"]
        );
        assert_eq!(
            all(&mut SseParser::default(), &[b"  \n\n"]),
            Vec::<String>::new()
        );
    }

    /// Catches: an event buffered without bound (a stream with no blank line grew the
    /// buffer to the stream's size, rescanned on every chunk: seconds of CPU per MB).
    #[test]
    fn an_event_past_the_limit_is_an_error_and_bytes_are_scanned_once() {
        let mut p = SseParser::default();
        let chunk = vec![b'x'; 64 * 1024];
        let started = std::time::Instant::now();
        let mut fed = 0;
        let err = loop {
            match p.feed(&chunk) {
                Ok(events) => assert!(events.is_empty()),
                Err(e) => break e,
            }
            fed += chunk.len();
            assert!(fed <= MAX_EVENT_BYTES, "fed {fed} bytes without an error");
        };
        assert_eq!(err, SseError::EventTooLarge);
        // Many small events never add up to the limit.
        let mut p = SseParser::default();
        for _ in 0..100_000 {
            assert_eq!(p.feed(b"data: 0123456789\n\n").expect("ok").len(), 1);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    /// Catches: an empty read between a CR and its LF forgetting the CR, so the LF ends
    /// one more (blank) line and splits the event in two (found by the property below).
    #[test]
    fn an_empty_read_between_cr_and_lf_changes_nothing() {
        let whole = all(&mut SseParser::default(), &[b"data: a\r\ndata: b\n\n"]);
        assert_eq!(whole, vec!["a\nb".to_string()]);
        let split = all(
            &mut SseParser::default(),
            &[b"data: a\r", b"", b"\ndata: b\n\n"],
        );
        assert_eq!(split, whole);
    }

    /// SSE framing pieces mixed into arbitrary streams.
    const PIECES: &[&str] = &[
        "data: ",
        "data:",
        "\n",
        "\r",
        "\r\n",
        "\n\n",
        ":",
        ": ping\n",
        "event: x\n",
        "[DONE]",
        "{\"a\":1}",
        " ",
        "é",
    ];

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            prop::sample::select(PIECES).prop_map(|s| s.as_bytes().to_vec()),
            ".{0,6}".prop_map(String::into_bytes),
            any::<u8>().prop_map(|b| vec![b]),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Catches: events that depend on where the chunks are cut (a CRLF or a UTF-8
        /// character split between two reads).
        #[test]
        fn chunking_does_not_change_the_events(
            bytes in stream(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let whole = all(&mut SseParser::default(), &[&bytes]);
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut from = 0;
            for to in at {
                chunks.push(&bytes[from..to]);
                from = to;
            }
            chunks.push(&bytes[from..]);
            prop_assert_eq!(all(&mut SseParser::default(), &chunks), whole.clone());
            let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
            prop_assert_eq!(all(&mut SseParser::default(), &bytewise), whole);
        }

        /// Catches: a payload that is not what its `data:` lines say.
        #[test]
        fn data_lines_come_back_as_written(payloads in prop::collection::vec("[^\r\n]{0,20}", 1..6)) {
            let mut bytes = Vec::new();
            for p in &payloads {
                bytes.extend_from_slice(format!("data: {p}\n\n").as_bytes());
            }
            prop_assert_eq!(all(&mut SseParser::default(), &[&bytes]), payloads);
        }
    }
}
