//! Bounds on what a model server can make the gateway hold: the bytes of a body read, the
//! size of one answer (text and tool call arguments), the number of tool calls, and the
//! token counts it reports.

use super::ProviderError;

/// Largest answer accepted: its text plus the names, ids and arguments of its tool calls.
/// A reply of `MAX_TOKENS` (4096) tokens is ~16 KB; this is for servers gone wrong.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;
/// Largest non-streamed answer body read (JSON escaping can double the answer's size).
pub const MAX_BODY_BYTES: usize = 2 * MAX_ANSWER_BYTES;
/// Most bytes of a streamed answer read, events and keep-alives included.
pub const MAX_STREAM_BYTES: usize = 4 * MAX_ANSWER_BYTES;
/// Most bytes of an error body read; only its start is shown anyway.
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;
/// Most tool calls one answer may make.
pub const MAX_TOOL_CALLS: usize = 128;
/// Largest token count taken from a server's usage report (per answer), so sums over a
/// run's steps and `as i64` casts downstream cannot overflow.
pub const MAX_REPORTED_TOKENS: u64 = u32::MAX as u64;

/// A token count from a usage report, capped.
pub fn tokens(v: Option<u64>) -> u64 {
    v.unwrap_or(0).min(MAX_REPORTED_TOKENS)
}

/// Counts the bytes of one answer against [`MAX_ANSWER_BYTES`].
#[derive(Debug, Default)]
pub struct AnswerBudget {
    used: usize,
}

impl AnswerBudget {
    /// Takes `n` more bytes; the error once the answer is too large.
    pub fn take(&mut self, n: usize) -> Result<(), ProviderError> {
        self.used = self.used.saturating_add(n);
        if self.used > MAX_ANSWER_BYTES {
            return Err(ProviderError::InvalidResponse(format!(
                "the answer is larger than {MAX_ANSWER_BYTES} bytes (text and tool call arguments)"
            )));
        }
        Ok(())
    }
}

/// Reads at most `limit` bytes of `resp`'s body. `Ok((bytes, false))` when that was the
/// whole body, `Ok((first limit bytes, true))` when more was left unread.
pub async fn read_body(
    resp: &mut reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        let room = limit - buf.len();
        if chunk.len() > room {
            buf.extend_from_slice(&chunk[..room]);
            return Ok((buf, true));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok((buf, false))
}

/// An error answer's body as text, at most [`MAX_ERROR_BODY_BYTES`] of it; a body that
/// cannot be read is empty (the status says enough).
pub async fn error_body(resp: &mut reqwest::Response) -> String {
    match read_body(resp, MAX_ERROR_BODY_BYTES).await {
        Ok((bytes, _)) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    }
}

/// A non-streamed answer body as text, refused past [`MAX_BODY_BYTES`].
pub async fn answer_body(resp: &mut reqwest::Response) -> Result<String, ProviderError> {
    let (bytes, more) = read_body(resp, MAX_BODY_BYTES)
        .await
        .map_err(|e| ProviderError::Network(e.to_string()))?;
    if more {
        return Err(ProviderError::InvalidResponse(format!(
            "the answer body is larger than {MAX_BODY_BYTES} bytes"
        )));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_and_tokens() {
        let mut b = AnswerBudget::default();
        assert!(b.take(MAX_ANSWER_BYTES).is_ok());
        assert!(matches!(b.take(1), Err(ProviderError::InvalidResponse(_))));
        assert!(b.take(usize::MAX).is_err(), "saturates, no overflow");
        assert_eq!(tokens(Some(u64::MAX)), MAX_REPORTED_TOKENS);
        assert_eq!(tokens(None), 0);
        assert_eq!(tokens(Some(12)), 12);
    }
}
