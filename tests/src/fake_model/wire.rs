//! Wire helpers shared by the OpenAI and Anthropic dialects: the reply, usage and common checks.

use serde_json::Value;

/// `created` of every OpenAI response: fixed, so tests can compare whole responses.
pub(super) const CREATED: u64 = 1_700_000_000;

/// Into how many pieces streamed text and tool arguments are split (at most).
pub(super) const STREAM_PIECES: usize = 3;

/// A tool call with the id the server gave it.
#[derive(Debug, Clone)]
pub(super) struct IssuedCall {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) arguments: String,
}

/// What the model answers, in dialect-neutral form.
#[derive(Debug, Clone)]
pub(super) enum Reply {
    Text(String),
    ToolCalls(Vec<IssuedCall>),
}

/// Token counts, roughly chars / 4.
#[derive(Debug, Clone, Copy)]
pub(super) struct Usage {
    pub(super) prompt: u64,
    pub(super) completion: u64,
}

impl Usage {
    /// `prompt` is what the request's messages (and system prompt) weigh.
    pub(super) fn new(prompt: &[&Value], reply: &Reply) -> Usage {
        let prompt_chars = prompt
            .iter()
            .filter(|value| !value.is_null())
            .map(|value| value.to_string().chars().count())
            .sum();
        let completion_chars = match reply {
            Reply::Text(text) => text.chars().count(),
            Reply::ToolCalls(calls) => calls
                .iter()
                .map(|call| call.name.chars().count() + call.arguments.chars().count())
                .sum(),
        };
        Usage {
            prompt: tokens(prompt_chars),
            completion: tokens(completion_chars),
        }
    }
}

fn tokens(chars: usize) -> u64 {
    u64::try_from(chars / 4).unwrap_or(u64::MAX).max(1)
}

/// Checks every dialect shares: a non-empty `model` and a non-empty `messages` array.
pub(super) fn check_model_and_messages(body: &Value, problems: &mut Vec<String>) {
    if !body.is_object() {
        problems.push("body is not a JSON object".to_owned());
        return;
    }
    match body.get("model").and_then(Value::as_str) {
        Some(model) if !model.is_empty() => {}
        _ => problems.push("`model` is missing or not a non-empty string".to_owned()),
    }
    match body.get("messages").and_then(Value::as_array) {
        Some(messages) if !messages.is_empty() => {}
        _ => problems.push("`messages` is missing or not a non-empty array".to_owned()),
    }
}

/// The text of a message `content`: a string, or the `text` of its `{type:"text"}` parts
/// joined by newlines.
pub(super) fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Splits `text` into up to `pieces` non-empty parts on char boundaries.
pub(super) fn split(text: &str, pieces: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(pieces.max(1));
    chars
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// The model name to echo back.
pub(super) fn model_of(body: &Value) -> String {
    body["model"].as_str().unwrap_or("fake-model").to_owned()
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_keeps_all_chars_in_order() {
        assert_eq!(split("héllo wörld", 3), ["héll", "o wö", "rld"]);
        assert_eq!(split("ab", 3), ["a", "b"]);
        assert!(split("", 3).is_empty());
    }
}
