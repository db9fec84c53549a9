//! Telling a provider's "the request is longer than the context window" apart from other
//! refusals: OpenAI answers 400 with `error.code: "context_length_exceeded"` (or a message
//! naming the "maximum context length"), Anthropic 400 with `prompt is too long`. The body
//! is outside input: read as JSON when it is, and only looked at, never kept.

/// Whether an error answer (`status`, `body`) says the prompt was too long.
pub(super) fn is_context_length(status: u16, body: &str) -> bool {
    if status != 400 && status != 413 {
        return false;
    }
    let v = serde_json::from_str::<serde_json::Value>(body).ok();
    let code = v
        .as_ref()
        .and_then(|v| v.pointer("/error/code"))
        .and_then(|c| c.as_str());
    if code == Some("context_length_exceeded") {
        return true;
    }
    let message = v
        .as_ref()
        .and_then(|v| v.pointer("/error/message"))
        .and_then(|m| m.as_str())
        .unwrap_or(body);
    let lower = crate::text::head(message, 2000).to_ascii_lowercase();
    lower.contains("maximum context length")
        || lower.contains("prompt is too long")
        || lower.contains("context_length_exceeded")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_providers_refusals_are_recognized_and_nothing_else() {
        let openai = r#"{"error":{"message":"This model's maximum context length is 16000 tokens. However, your messages resulted in 17000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!(is_context_length(400, openai));
        assert!(is_context_length(400, anthropic));
        assert!(is_context_length(400, "maximum context length exceeded"));
        assert!(!is_context_length(500, openai));
        assert!(!is_context_length(
            400,
            r#"{"error":{"message":"max_tokens is too large","code":"invalid_value"}}"#
        ));
        assert!(!is_context_length(400, "not json"));
    }
}
