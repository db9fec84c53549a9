//! A command's output (stdout and stderr, interleaved as written), kept bounded: the first
//! and the last [`HALF`] bytes, and how many bytes were cut between them. A background
//! command's reader also asks for "what is new since I last looked".

use std::collections::VecDeque;

/// Bytes kept at each end of an output (under 64 KB in all, docs/tools.md, so that the JSON
/// answer around it fits [`MAX_RESULT`] without a second cut).
pub const HALF: usize = 29 * 1024;
/// Largest tool result (serialized JSON) a command's answer may be: the run keeps 64 KB
/// of a tool result, and a result cut there would no longer be JSON.
pub const MAX_RESULT: usize = 60 * 1024;

#[derive(Debug, Default)]
pub struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    /// How far a reader got (`take_new`).
    read: u64,
}

impl Capture {
    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        if self.head.len() < HALF {
            let n = (HALF - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.len() >= HALF {
            self.tail.clear();
            self.tail.extend(&data[data.len() - HALF..]);
        } else {
            let overflow = (self.tail.len() + data.len()).saturating_sub(HALF);
            self.tail.drain(..overflow);
            self.tail.extend(data);
        }
    }

    /// Bytes written in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Everything kept, with a line saying how much was cut from the middle.
    pub fn render(&self) -> String {
        let cut = self.total - (self.head.len() + self.tail.len()) as u64;
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        if cut > 0 {
            out.push_str(&format!(
                "\n…[{cut} bytes of output cut; the first and last {} KB are shown]…\n",
                HALF / 1024
            ));
        }
        let (a, b) = self.tail.as_slices();
        out.push_str(&String::from_utf8_lossy(&[a, b].concat()));
        out
    }

    /// What was written since the last call (bounded the same way).
    pub fn take_new(&mut self) -> String {
        let from = self.read;
        self.read = self.total;
        let head_len = self.head.len() as u64;
        let tail_start = self.total - self.tail.len() as u64;
        let mut out = Vec::new();
        if from < head_len {
            out.extend_from_slice(&self.head[from as usize..]);
        }
        let resume = from.max(head_len);
        let lost = tail_start.saturating_sub(resume);
        let mut text = String::from_utf8_lossy(&out).into_owned();
        if lost > 0 {
            text.push_str(&format!("\n…[{lost} bytes of output cut]…\n"));
        }
        let skip = resume.saturating_sub(tail_start) as usize;
        let rest: Vec<u8> = self.tail.iter().skip(skip).copied().collect();
        text.push_str(&String::from_utf8_lossy(&rest));
        text
    }
}

/// `v` with `text` under `key`, serialized within [`MAX_RESULT`] bytes: when escaping
/// makes it longer, more of the middle of `text` is cut (and the cut said).
pub fn fit_json(mut v: serde_json::Value, key: &str, text: String) -> String {
    let mut text = text;
    loop {
        v[key] = serde_json::Value::String(text.clone());
        let s = v.to_string();
        if s.len() <= MAX_RESULT || text.is_empty() {
            return s;
        }
        let keep = text.len().saturating_sub(s.len() - MAX_RESULT + 256);
        text = squeeze(&text, keep);
    }
}

/// `s` cut to about `keep` bytes: its head and tail, with the cut said between them.
fn squeeze(s: &str, keep: usize) -> String {
    let head = crate::text::floor_boundary(s, keep / 2);
    let tail = crate::text::ceil_boundary(s, s.len() - keep / 2);
    if tail <= head {
        return s.to_string();
    }
    format!(
        "{}\n…[{} more bytes cut]…\n{}",
        &s[..head],
        tail - head,
        &s[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result full of characters JSON escapes still fits, as valid JSON.
    /// Catches: a command's answer cut by the run's result limit into invalid JSON.
    #[test]
    fn results_fit_the_run_s_limit_as_json() {
        for text in [
            "\"".repeat(200_000),
            "\u{1}".repeat(100_000),
            "é".repeat(90_000),
            "ok".into(),
        ] {
            let s = fit_json(
                serde_json::json!({"status": "exited"}),
                "output",
                text.clone(),
            );
            assert!(s.len() <= MAX_RESULT, "{}", s.len());
            let v: serde_json::Value = serde_json::from_str(&s).unwrap_or_default();
            assert_eq!(v["status"], "exited");
            if text == "ok" {
                assert_eq!(v["output"], "ok");
            }
        }
    }

    #[test]
    fn small_output_is_kept_whole_and_read_once() {
        let mut c = Capture::default();
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.render(), "hello world");
        assert_eq!(c.take_new(), "hello world");
        assert_eq!(c.take_new(), "");
        c.push(b"!");
        assert_eq!(c.take_new(), "!");
    }

    /// A huge output keeps its head and tail and says how much was cut.
    /// Catches: unbounded buffering of a command's output.
    #[test]
    fn big_output_keeps_head_and_tail() {
        let mut c = Capture::default();
        c.push(&[b'a'; HALF]);
        for _ in 0..100 {
            c.push(&[b'b'; 10_000]);
        }
        c.push(b"END");
        let r = c.render();
        assert!(r.starts_with(&"a".repeat(HALF)));
        assert!(r.ends_with("bEND"));
        assert!(r.contains(&format!("[{} bytes of output cut", 1_000_003 - HALF as u64)));
        assert!(r.len() < 2 * HALF + 200);
        let new = c.take_new();
        assert!(new.contains("bytes of output cut") && new.ends_with("END"));
        c.push(b"more");
        assert_eq!(c.take_new(), "more");
    }
}
