//! The fake model's context window: a request whose prompt (counted with the fake's own
//! rule, the one its `usage` reports: the JSON text of the messages — and Anthropic's
//! `system` — at 4 characters a token) is longer than the window is refused exactly as the
//! providers do. OpenAI counts the requested completion in (`max_tokens` or
//! `max_completion_tokens`) and answers 400 `context_length_exceeded`; Anthropic answers
//! 400 `prompt is too long`.

use serde_json::{json, Value};

use super::wire::{Reply, Usage};

/// The prompt's tokens by the fake's rule (`messages`, and `system` for Anthropic).
pub(super) fn prompt_tokens(body: &Value, anthropic: bool) -> u64 {
    let empty = Reply::Text(String::new());
    if anthropic {
        Usage::new(&[&body["system"], &body["messages"]], &empty).prompt
    } else {
        Usage::new(&[&body["messages"]], &empty).prompt
    }
}

/// The refusal of a request over `window`, as (status, body); `None` when it fits.
pub(super) fn refusal(body: &Value, anthropic: bool, window: u64) -> Option<(u16, String)> {
    let prompt = prompt_tokens(body, anthropic);
    if anthropic {
        return (prompt > window).then(|| {
            let body = json!({
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": format!("prompt is too long: {prompt} tokens > {window} maximum"),
                },
            });
            (400, body.to_string())
        });
    }
    let completion = body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
        .unwrap_or(0);
    (prompt + completion > window).then(|| {
        let body = json!({
            "error": {
                "message": format!(
                    "This model's maximum context length is {window} tokens. However, you requested {} tokens ({prompt} in the messages, {completion} in the completion). Please reduce the length of the messages or completion.",
                    prompt + completion
                ),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            },
        });
        (400, body.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_the_window_is_refused_as_each_provider_does() {
        let long = "x".repeat(4000);
        let openai = json!({"messages": [{"role": "user", "content": long}], "max_tokens": 100});
        let (code, body) = refusal(&openai, false, 1000).expect("refused");
        assert_eq!(code, 400);
        let v: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["error"]["code"], "context_length_exceeded");
        assert!(v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("This model's maximum context length is 1000 tokens")));
        assert_eq!(refusal(&openai, false, 1200), None);
        // The completion counts for OpenAI.
        assert!(refusal(&openai, false, 1050).is_some());
        let anthropic = json!({"system": "s", "messages": [{"role": "user", "content": long}], "max_tokens": 100});
        let (_, body) = refusal(&anthropic, true, 1000).expect("refused");
        let v: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(v["type"], "error");
        assert!(v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("prompt is too long: ")));
        assert_eq!(refusal(&anthropic, true, 1050), None);
    }
}
