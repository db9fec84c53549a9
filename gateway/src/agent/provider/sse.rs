//! A small incremental Server-Sent Events parser: feed bytes, get `data:` payloads.

/// Accumulates bytes and yields the data of each complete event.
#[derive(Default)]
pub struct SseParser {
    buf: Vec<u8>,
}

impl SseParser {
    /// Feed a chunk; returns the `data` payloads of the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some((end, sep)) = find_event_end(&self.buf) {
            let event: Vec<u8> = self.buf.drain(..end + sep).collect();
            let text = String::from_utf8_lossy(&event[..end]);
            let mut data = Vec::new();
            for line in text.lines() {
                if let Some(rest) = line.strip_prefix("data:") {
                    data.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
                }
            }
            if !data.is_empty() {
                out.push(data.join("\n"));
            }
        }
        out
    }

    /// Whatever is left once the stream ended (an event without the closing blank line).
    pub fn finish(&mut self) -> Vec<String> {
        if self.buf.iter().all(|b| b.is_ascii_whitespace()) {
            return Vec::new();
        }
        self.buf.extend_from_slice(b"\n\n");
        self.feed(&[])
    }
}

fn find_event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_across_chunk_boundaries() {
        let mut p = SseParser::default();
        assert!(p.feed(b"data: {\"a\"").is_empty());
        assert_eq!(
            p.feed(b":1}\n\ndata: [DONE]\n\n"),
            vec!["{\"a\":1}", "[DONE]"]
        );
    }

    #[test]
    fn ignores_comments_and_handles_crlf() {
        let mut p = SseParser::default();
        assert_eq!(p.feed(b": keep-alive\r\n\r\ndata: x\r\n\r\n"), vec!["x"]);
    }
}
